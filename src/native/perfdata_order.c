/* perf's delivery order of the records of a perf.data stream.
 *
 * perf record drains one ring buffer per CPU, so records are not in time order in the file:
 * a child's first samples can come before the FORK that another CPU wrote. perf report and
 * perf script queue every kernel record that has a time stamp and deliver the queue in time
 * order at each PERF_RECORD_FINISHED_ROUND, up to the largest time stamp the queue held at
 * the round before (what came later may still be overtaken by records of the next round);
 * records without a time stamp (0 or none) are delivered when they are read; at the end the
 * rest of the queue goes in time order. Ties keep stream order. Names, maps and parents a
 * sample is attributed to are those delivered before it, so the attribution depends on this
 * order, which this function reproduces: it gives every record its delivery number.
 *
 * Memory: the queue holds one round at a time (24-byte entries). Most records arrive in time
 * order (one CPU's buffer at a time), so the queue is a run sorted by arrival that takes them
 * in O(1), plus a heap for the ones that arrive out of order; the next record delivered is
 * the smaller of the run's head and the heap's top.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define API __attribute__((visibility("default")))

enum { REC_USER_START = 64, REC_FINISHED_ROUND = 68 };

struct ent { uint64_t time, seq, ref; };   /* ref: index, top bit set for "other" records */

struct heap { struct ent *e; size_t n, cap; };

static int before(const struct ent *a, const struct ent *b)
{
	return a->time < b->time || (a->time == b->time && a->seq < b->seq);
}

static int push(struct heap *h, struct ent x)
{
	if (h->n == h->cap) {
		size_t cap = h->cap ? h->cap * 2 : 1024;
		struct ent *e = realloc(h->e, cap * sizeof(*e));
		if (!e)
			return -ENOMEM;
		h->e = e;
		h->cap = cap;
	}
	size_t i = h->n++;
	while (i) {
		size_t p = (i - 1) / 2;
		if (!before(&x, &h->e[p]))
			break;
		h->e[i] = h->e[p];
		i = p;
	}
	h->e[i] = x;
	return 0;
}

static struct ent pop(struct heap *h)
{
	struct ent top = h->e[0], x = h->e[--h->n];
	size_t i = 0;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= h->n)
			break;
		if (c + 1 < h->n && before(&h->e[c + 1], &h->e[c]))
			c++;
		if (!before(&h->e[c], &x))
			break;
		h->e[i] = h->e[c];
		i = c;
	}
	if (h->n)
		h->e[i] = x;
	return top;
}

#define OTHER (1ull << 63)

/* the queue: a FIFO run in (time, seq) order plus a heap for the rest */
struct queue { struct ent *run; size_t head, tail, cap; struct heap h; };

static size_t q_len(const struct queue *q) { return q->tail - q->head + q->h.n; }

static int q_push(struct queue *q, struct ent x)
{
	if (q->tail > q->head && before(&x, &q->run[q->tail - 1]))
		return push(&q->h, x);
	if (q->tail == q->cap) {
		if (q->head) {          /* reuse the delivered front */
			memmove(q->run, q->run + q->head, (q->tail - q->head) * sizeof(*q->run));
			q->tail -= q->head;
			q->head = 0;
		}
		if (q->tail == q->cap) {
			size_t cap = q->cap ? q->cap * 2 : 4096;
			struct ent *r = realloc(q->run, cap * sizeof(*r));
			if (!r)
				return -ENOMEM;
			q->run = r;
			q->cap = cap;
		}
	}
	q->run[q->tail++] = x;
	return 0;
}

/* the smallest entry (the queue is not empty) */
static const struct ent *q_top(const struct queue *q)
{
	if (q->tail == q->head)
		return &q->h.e[0];
	if (!q->h.n || before(&q->run[q->head], &q->h.e[0]))
		return &q->run[q->head];
	return &q->h.e[0];
}

static struct ent q_pop(struct queue *q)
{
	if (q->tail > q->head && (!q->h.n || before(&q->run[q->head], &q->h.e[0]))) {
		struct ent x = q->run[q->head++];
		if (q->head == q->tail)
			q->head = q->tail = 0;
		return x;
	}
	return pop(&q->h);
}

static void deliver(struct ent x, uint64_t *s_dseq, uint64_t *o_dseq, uint64_t *d)
{
	if (x.ref & OTHER)
		o_dseq[x.ref & ~OTHER] = (*d)++;
	else
		s_dseq[x.ref] = (*d)++;
}

/* Samples (s_*) and other records (o_*), each in stream order, with their time stamps
 * (UINT64_MAX: none); for the others, their types and how many samples came before each
 * (o_before). Fills the delivery numbers s_dseq and o_dseq. Returns 0 or -ENOMEM. */
API int pdorder(const uint64_t *s_time, uint64_t ns,
		const uint64_t *o_before, const uint64_t *o_time, const uint32_t *o_type, uint64_t no,
		uint64_t *s_dseq, uint64_t *o_dseq)
{
	struct queue q = {0};
	uint64_t d = 0, next_flush = 0, max_time = 0, i = 0, j = 0;
	while (i < ns || j < no) {
		struct ent x;
		uint32_t type = 9;
		/* seq: the place in the stream, i + j, for the ties */
		if (j >= no || (i < ns && i < o_before[j])) {
			x = (struct ent){s_time[i], i + j, i};
			i++;
		} else {
			type = o_type[j];
			x = (struct ent){o_time[j], i + j, j | OTHER};
			j++;
		}
		if (type == REC_FINISHED_ROUND) {
			o_dseq[x.ref & ~OTHER] = d++;
			/* perf skips a round whose queue is empty (its limit stays), and the first
			 * round has no limit yet */
			if (q_len(&q)) {
				while (next_flush && q_len(&q) && q_top(&q)->time <= next_flush)
					deliver(q_pop(&q), s_dseq, o_dseq, &d);
				next_flush = max_time;
			}
			continue;
		}
		if (type >= REC_USER_START || x.time == 0 || x.time == UINT64_MAX) {
			deliver(x, s_dseq, o_dseq, &d);
			continue;
		}
		/* the largest time stamp of what is queued (reset when the queue was empty) */
		if (!q_len(&q) || x.time >= max_time)
			max_time = x.time;
		if (q_push(&q, x)) {
			free(q.run);
			free(q.h.e);
			return -ENOMEM;
		}
	}
	while (q_len(&q))
		deliver(q_pop(&q), s_dseq, o_dseq, &d);
	free(q.run);
	free(q.h.e);
	return 0;
}
