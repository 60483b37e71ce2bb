/* io/slurp.c: see slurp.h. */
#include "io/slurp.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

char *kl_msg_oneline(char *msg)
{
  if (!msg) return msg;
  size_t n = 0;
  for (unsigned char *p = (unsigned char *)msg; *p; ++p, ++n)
    if (*p < 0x20 || *p == 0x7f) *p = ' ';
  while (n && msg[n - 1] == ' ') msg[--n] = '\0';
  return msg;
}

kelvin_status kl_io_slurp(const char *path, long max, char **text, size_t *len, char *why, size_t cap)
{
  *text = NULL;
  *len = 0;
  FILE *f = fopen(path, "rb");
  if (!f) {
    snprintf(why, cap, "cannot read: %s", strerror(errno));
    return KELVIN_ERR_IO;
  }
  struct stat sb;
  if (fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode)) {
    fclose(f);
    snprintf(why, cap, "not a regular file");
    return KELVIN_ERR_CONFIG;
  }
  if (sb.st_size > max) {
    fclose(f);
    snprintf(why, cap, "the file is %lld bytes, more than the limit of %ld", (long long)sb.st_size, max);
    return KELVIN_ERR_CONFIG;
  }
  size_t n = 0, room = (size_t)sb.st_size + 1;
  char *buf = malloc(room + 1);
  if (!buf) {
    fclose(f);
    snprintf(why, cap, "out of memory");
    return KELVIN_ERR_NOMEM;
  }
  /* the file may grow while read: read to its end, within the limit */
  for (;;) {
    const size_t r = fread(buf + n, 1, room - n, f);
    n += r;
    if (r == 0) break;
    if (n == room) {
      if ((long)n > max) {
        free(buf);
        fclose(f);
        snprintf(why, cap, "the file is more than the limit of %ld bytes", max);
        return KELVIN_ERR_CONFIG;
      }
      room *= 2;
      char *b2 = realloc(buf, room + 1);
      if (!b2) {
        free(buf);
        fclose(f);
        snprintf(why, cap, "out of memory");
        return KELVIN_ERR_NOMEM;
      }
      buf = b2;
    }
  }
  const int bad = ferror(f);
  fclose(f);
  if (bad) {
    free(buf);
    snprintf(why, cap, "read error");
    return KELVIN_ERR_IO;
  }
  buf[n] = '\0';
  *text = buf;
  *len = n;
  return KELVIN_OK;
}
