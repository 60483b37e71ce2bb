/* tests/tshard.c: ranks as threads (tests/tshard.h). */
#include "tshard.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define TS_MAX 16

typedef struct group {
  int size;
  pthread_barrier_t bar;
  const void *send[TS_MAX];
  int code[TS_MAX];
  char *msg[TS_MAX];
} group;

typedef struct member {
  group *g;
  int rank;
  kelvin_shard sh;
  void (*fn)(const kelvin_shard *, void *);
  void *arg;
} member;

static int gather(void *ctx, const void *send, void *recv, const size_t *counts, int root)
{
  member *m = ctx;
  group *g = m->g;
  g->send[m->rank] = send;
  pthread_barrier_wait(&g->bar);
  if (root < 0 || root == m->rank) {
    size_t off = 0;
    for (int r = 0; r < g->size; ++r) {
      unsigned char *dst = (unsigned char *)recv + off;
      if (counts[r] && dst != g->send[r]) memcpy(dst, g->send[r], counts[r]); /* (in place: already there) */
      off += counts[r];
    }
  }
  pthread_barrier_wait(&g->bar); /* no sender leaves (and frees its buffer) before every copy is made */
  return 0;
}

static int agree(void *ctx, int *code, char *msg, size_t cap)
{
  member *m = ctx;
  group *g = m->g;
  g->code[m->rank] = *code;
  g->msg[m->rank] = msg;
  pthread_barrier_wait(&g->bar);
  int first = -1;
  for (int r = 0; r < g->size && first < 0; ++r)
    if (g->code[r] != 0) first = r;
  char *copy = NULL;
  if (first >= 0 && first != m->rank) copy = strdup(g->msg[first]);
  pthread_barrier_wait(&g->bar); /* every copy taken before any rank writes its own message */
  if (first >= 0) {
    *code = g->code[first];
    if (copy) {
      strncpy(msg, copy, cap - 1);
      msg[cap - 1] = '\0';
    }
  }
  free(copy);
  pthread_barrier_wait(&g->bar);
  return 0;
}

static void *thread_main(void *p)
{
  member *m = p;
  m->fn(&m->sh, m->arg);
  return NULL;
}

int tshard_run(int size, void (*fn)(const kelvin_shard *sh, void *arg), void **arg)
{
  if (size < 1 || size > TS_MAX) return 1;
  group g;
  memset(&g, 0, sizeof g);
  g.size = size;
  pthread_barrier_init(&g.bar, NULL, (unsigned)size);
  member mem[TS_MAX];
  pthread_t th[TS_MAX];
  int started = 0, rc = 0;
  for (int r = 0; r < size; ++r) {
    mem[r] = (member){&g, r, {r, size, r, size, &mem[r], gather, agree}, fn, arg ? arg[r] : NULL};
    if (pthread_create(&th[r], NULL, thread_main, &mem[r]) != 0) {
      rc = 1;
      break;
    }
    ++started;
  }
  for (int r = 0; r < started; ++r) pthread_join(th[r], NULL);
  pthread_barrier_destroy(&g.bar);
  return rc;
}
