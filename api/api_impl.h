/* api/api_impl.h: the handles of the public API (include/kelvin/ headers) as the api/ files share them
 * (the grinding problem's: api/grind_impl.h). Never installed. */
#ifndef KL_API_IMPL_H
#define KL_API_IMPL_H

#include <stdarg.h>

#include "host/host.h"
#include "kelvin/batch.h"

#define KL_API_MSG 4096

struct kelvin_device {
  kl_host *h;
  int open;
  char msg[KL_API_MSG];
  char spec_name[64]; /* the spec's name in messages (kelvin_device_set_spec_name); "" for the default */
};

/* Record "fmt..." as the message (msg, KL_API_MSG bytes) and return st. */
kelvin_status kl_api_fail(char *msg, kelvin_status st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
