/* io/table_test.c: the CSV reader on RFC 4180's cases, written out by hand: quoting (commas, doubled
 * quotes and line breaks inside quotes), CRLF, a byte order mark, the physical line of each row; and the
 * errors: empty fields, ragged rows, stray quotes and carriage returns, unterminated quotes, the row
 * limit; strict numbers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "io/sweep_config.h"
#include "io/table.h"
#include "tests/cli_util.h"

typedef struct got {
  int rows;
  char cell[16][8][64];
  int n[16];
  long line[16];
} got;

static kelvin_status keep(void *ctx, const kl_csv_row *r, char *msg, int cap)
{
  (void)msg;
  (void)cap;
  got *g = ctx;
  if (g->rows >= 16) return KELVIN_ERR_ARG;
  g->n[g->rows] = r->n;
  g->line[g->rows] = r->line;
  for (int i = 0; i < r->n && i < 8; ++i) snprintf(g->cell[g->rows][i], 64, "%s", r->f[i]);
  ++g->rows;
  return KELVIN_OK;
}

static kelvin_status count(void *ctx, const kl_csv_row *r, char *msg, int cap)
{
  (void)r;
  (void)msg;
  (void)cap;
  ++*(int *)ctx;
  return KELVIN_OK;
}

static kelvin_status parse(const char *text, got *g, char *msg)
{
  memset(g, 0, sizeof *g);
  return kl_csv_parse_mem("t.csv", text, strlen(text), 100, keep, g, msg, 512);
}

static void test_good(void **state)
{
  (void)state;
  got g;
  char msg[512];
  /* BOM, CRLF, quoted comma, doubled quote, a line break inside quotes, blanks trimmed, a '#' preamble,
   * a blank line, no final line break */
  const char *t = "\xEF\xBB\xBF# preamble\r\nname , value\r\n\"a, b\",1\r\n\"say \"\"hi\"\"\",2\n\n\"two\nlines\", 3\nlast,4";
  assert_int_equal(parse(t, &g, msg), KELVIN_OK);
  assert_int_equal(g.rows, 5);
  assert_string_equal(g.cell[0][0], "name");
  assert_string_equal(g.cell[0][1], "value");
  assert_int_equal(g.line[0], 2);
  assert_string_equal(g.cell[1][0], "a, b");
  assert_int_equal(g.line[1], 3);
  assert_string_equal(g.cell[2][0], "say \"hi\"");
  assert_int_equal(g.line[2], 4);
  assert_string_equal(g.cell[3][0], "two\nlines");
  assert_string_equal(g.cell[3][1], "3");
  assert_int_equal(g.line[3], 6); /* the row starts on line 6 and ends on 7 */
  assert_int_equal(g.line[4], 8);
}

static void test_errors(void **state)
{
  (void)state;
  static const char *const bad[][2] = {
    {"a,b\n1,\n", "t.csv:2: column 'b': empty field"},
    {"a,b\n,2\n", "t.csv:2: column 'a': empty field"},
    {"a,b\n1,2,3\n", "t.csv:2: 3 fields, but the header has 2"},
    {"a,b\n1\n", "t.csv:2: 1 fields, but the header has 2"},
    {"a,b\n1,x\"y\n", "t.csv:2: column 'b': a quote inside an unquoted field"},
    {"a,b\n1,\"xy\"z\n", "t.csv:2: column 'b': text after the closing quote"},
    {"a,b\n1,\"xy\n", "t.csv:2: column 2: a quote opened here is never closed"},
    {"a,b\r1,2\n", "t.csv:1: a carriage return not followed by a line feed"},
    {"a,,b\n", "t.csv:1: header: column 2 has no name"},
    {"", "t.csv: no header row"},
    {"# only a preamble\n", "t.csv: no header row"},
  };
  got g;
  char msg[512];
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
    assert_int_equal(parse(bad[i][0], &g, msg), KELVIN_ERR_CONFIG);
    if (!strstr(msg, bad[i][1])) printf("# case %zu: '%s' lacks '%s'\n", i, msg, bad[i][1]);
    assert_non_null(strstr(msg, bad[i][1]));
  }
  /* the row limit: 101 rows pass a limit of 101, not one of 100 */
  char big[4096] = "a\n";
  for (int i = 0; i < 101; ++i) strcat(big, "1\n");
  int n = 0;
  assert_int_equal(kl_csv_parse_mem("t.csv", big, strlen(big), 101, count, &n, msg, sizeof msg), KELVIN_OK);
  assert_int_equal(n, 102); /* the header and 101 rows */
  assert_int_equal(kl_csv_parse_mem("t.csv", big, strlen(big), 100, count, &n, msg, sizeof msg), KELVIN_ERR_CONFIG);
  assert_non_null(strstr(msg, "more than 100 data rows (the limit)"));
}

static void test_numbers(void **state)
{
  (void)state;
  double v = 0;
  assert_int_equal(kl_parse_number("0.0004", &v), 0);
  assert_true(v == 0.0004);
  assert_int_equal(kl_parse_number("-1.5e-3", &v), 0);
  assert_true(v == -1.5e-3);
  assert_int_equal(kl_parse_number("+2", &v), 0);
  assert_true(v == 2.0);
  static const char *const no[] = {"0.0004abc", "1 2", "", "inf", "nan", "-inf", "0x10", "1e400", "1,5", "1.2.3", "e5", "--1"};
  for (size_t i = 0; i < sizeof no / sizeof no[0]; ++i) assert_int_equal(kl_parse_number(no[i], &v), -1);
}

/* The sweep's scenarios CSV (io/sweep_config.c, on this reader): a bad choice in a quoted field that
 * spans lines is reported in one line, as every reader's message is (found by fuzz_scenarios, whose
 * harness calls the reader directly: the CLI makes its own line of any message). */
static void test_scenarios_message_one_line(void **state)
{
  (void)state;
  kl_test_write(NULL, "scen_nl.csv", "m_kg,K,cr,v0_m_s,model,rule\n1,1e8,0.5,1,kv,\"pen\netration\"\n");
  kl_impact_batch *b = NULL;
  char msg[512];
  assert_int_equal(kl_sweep_load_csv("scen_nl.csv", 2, &b, msg, sizeof msg), KELVIN_ERR_CONFIG);
  kl_impact_batch_destroy(b);
  printf("# %s\n", msg);
  assert_null(strchr(msg, '\n'));
  assert_non_null(strstr(msg, "scen_nl.csv:2: column 'rule': must be one of penetration, force or -, got 'pen etration'"));
  remove("scen_nl.csv");
}

int main(void)
{
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_good), cmocka_unit_test(test_errors),
                                     cmocka_unit_test(test_numbers), cmocka_unit_test(test_scenarios_message_one_line)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
