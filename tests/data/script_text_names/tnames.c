/* threads renamed with prctl(PR_SET_NAME) to names perf script prints ambiguously */
#define _GNU_SOURCE
#include <pthread.h>
#include <sys/prctl.h>
__attribute__((noinline)) long spin(long n){ volatile long s=0; for(long i=0;i<n;i++) s+=i; return s; }
static const char *names[] = {"my thread 7", "4242", "x [001] y", "a: b", "12345", "1 2", "9.5: z", " lead", "K 77"};
static void *th(void *a){ prctl(PR_SET_NAME, (const char *)a); spin(15000000); return 0; }
int main(void){
  pthread_t t[9];
  for (int i = 0; i < 9; i++) { pthread_create(&t[i], 0, th, (void *)names[i]); pthread_join(t[i], 0); }
  spin(5000000);
  return 0;
}
