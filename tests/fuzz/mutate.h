/* The random edits of the replay drivers (replay.c, spe_replay.c): a xorshift generator and
 * the mutation of one input. Both drivers draw from it in the same order, so a seed names
 * the same inputs it always did. */
#ifndef HPM_FUZZ_MUTATE_H
#define HPM_FUZZ_MUTATE_H

#include <stdint.h>
#include <string.h>

static uint64_t state = 0x9e3779b97f4a7c15ull;

static uint64_t next(void)
{
	state ^= state << 13;
	state ^= state >> 7;
	state ^= state << 17;
	return state;
}

/* 1 to 8 random edits of buf (len bytes used, room for cap), each one of: 0 a bit flip, 1 a
 * byte change, 2 an inserted byte, 3 a deleted byte, 4 a copy of a span of up to 16 bytes
 * over another place (repeats records and fields); kinds < 5 uses only the first kinds of
 * them. Returns the new length. */
static size_t mutate(uint8_t *buf, size_t len, size_t cap, unsigned kinds)
{
	for (int edits = 1 + (int)(next() % 8); edits--;) {
		size_t at = len ? next() % len : 0;
		switch (next() % kinds) {
		case 0: if (len) buf[at] ^= (uint8_t)(1u << (next() % 8)); break;
		case 1: if (len) buf[at] = (uint8_t)next(); break;
		case 2:
			if (len < cap) {
				memmove(buf + at + 1, buf + at, len - at);
				buf[at] = (uint8_t)next();
				len++;
			}
			break;
		case 3:
			if (len) {
				memmove(buf + at, buf + at + 1, len - at - 1);
				len--;
			}
			break;
		default:
			if (len > 8) {
				size_t from = next() % len, k = 1 + next() % 16;
				if (from + k > len)
					k = len - from;
				if (at + k > len)
					k = len - at;
				memmove(buf + at, buf + from, k);
			}
		}
	}
	return len;
}

#endif
