/*
 * test_entelechy: drives a real session through entelechy.h. Start
 *   entelechy serve examples/rings/scene.esn --listen 127.0.0.1:0
 * (on a copy: the test changes a param) and run `test_entelechy 127.0.0.1 PORT`. Prints one line
 * per check and exits 0 when all pass.
 */
#include "entelechy.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;

static void check(int passed, const char *what) {
  printf("%s %s\n", passed ? "ok" : "FAILED", what);
  if (!passed) failures++;
}

/* The value `trace` reports for node.port at the element it traced, component c. */
static int traced(const char *answer, const char *node, int c, double *value) {
  char path[64], name[64], port[64];
  int i;
  for (i = 0; i < 64; i++) {
    snprintf(path, sizeof path, "ok.values.%d.node", i);
    if (entelechy_json_string(answer, path, name, sizeof name) != ENTELECHY_OK) return -1;
    snprintf(path, sizeof path, "ok.values.%d.port", i);
    if (entelechy_json_string(answer, path, port, sizeof port) != ENTELECHY_OK) return -1;
    if (strcmp(name, node) == 0 && strcmp(port, "result") == 0) {
      snprintf(path, sizeof path, "ok.values.%d.value.%d", i, c);
      return entelechy_json_number(answer, path, value);
    }
  }
  return -1;
}

int main(int argc, char **argv) {
  char error[256], text[256];
  char *answer = NULL;
  entelechy *conn;
  float small[4], *field;
  int width = 0, height = 0, components = 0, status, c;
  double number, tint, rings;
  const int x = 5, y = 7;

  if (argc != 3) {
    fprintf(stderr, "usage: %s HOST PORT (as `entelechy serve SCENE --listen` printed them)\n", argv[0]);
    return 2;
  }
  /* the JSON reader on its own: nesting, escapes, indexes, what is not there */
  {
    const char *json = "{\"id\":3,\"ok\":{\"a\":[1,{\"b\":\"x\\\"y\\u00e9\\n\"},[2,3]],\"c\":-2.5e1,\"d\":true}}";
    check(entelechy_json_string(json, "ok.a.1.b", text, sizeof text) == ENTELECHY_OK && strcmp(text, "x\"y\xc3\xa9\n") == 0,
          "json: a string with escapes, inside an array inside an object");
    check(entelechy_json_number(json, "ok.a.2.1", &number) == ENTELECHY_OK && number == 3, "json: an array in an array");
    check(entelechy_json_number(json, "ok.c", &number) == ENTELECHY_OK && number == -25, "json: a number past a nested value");
    check(entelechy_json_number(json, "ok.d", &number) == ENTELECHY_OK && number == 1, "json: true reads as 1");
    check(entelechy_json_find(json, "ok.e") == NULL && entelechy_json_find(json, "ok.a.3") == NULL, "json: what is not there is NULL");
    check(entelechy_json_string(json, "ok.a.1.b", text, 3) == ENTELECHY_ESPACE && strcmp(text, "x\"") == 0,
          "json: a string cut to the buffer says ENTELECHY_ESPACE");
  }

  conn = entelechy_connect(argv[1], atoi(argv[2]), error, sizeof error);
  if (!conn) {
    fprintf(stderr, "%s\n", error);
    return 1;
  }
  check(entelechy_set_timeout(conn, 60000) == ENTELECHY_OK, "a 60 s timeout is set");

  /* status: one line in, its answer out */
  status = entelechy_request(conn, "{\"id\":1,\"op\":\"status\"}", &answer);
  check(status == ENTELECHY_OK, "status answers ok");
  check(entelechy_json_number(answer, "id", &number) == ENTELECHY_OK && number == 1, "the answer echoes id 1");
  check(entelechy_json_string(answer, "ok.scene", text, sizeof text) == ENTELECHY_OK && strcmp(text, "scene.esn") == 0,
        "status names the scene");
  check(entelechy_json_string(answer, "ok.outputs.0", text, sizeof text) == ENTELECHY_OK && strcmp(text, "result") == 0,
        "status lists the output result");
  entelechy_free(answer);

  /* evaluate, then read floats: first into a buffer too small, which still reports the size */
  check(entelechy_evaluate(conn, 0.5) == ENTELECHY_OK, "evaluate at t = 0.5");
  status = entelechy_read_f32(conn, "result", small, 4, &width, &height, &components);
  check(status == ENTELECHY_ESPACE, "a 4-float buffer is too small (ENTELECHY_ESPACE)");
  check(width == 256 && height == 256 && components == 4, "the sizes are reported anyway: 256 x 256 x 4");
  field = malloc(sizeof(float) * (size_t)width * (size_t)height * (size_t)components);
  if (!field) return 1;
  status = entelechy_read_f32(conn, NULL, field, (size_t)width * (size_t)height * (size_t)components, &width, &height,
                              &components);
  check(status == ENTELECHY_OK, "the first output reads as floats");

  /* the floats agree with what trace says the nodes computed at one element */
  status = entelechy_request(conn, "{\"op\":\"trace\",\"x\":5,\"y\":7,\"output\":\"result\"}", &answer);
  check(status == ENTELECHY_OK, "trace at (5, 7)");
  for (c = 0; c < 4; c++) {
    char what[96];
    int found = traced(answer, "tint", c, &tint) == ENTELECHY_OK;
    snprintf(what, sizeof what, "component %d at (5, 7) is the traced %.6f", c, found ? tint : -1.0);
    check(found && (float)tint == field[c * width * height + y * width + x], what);
  }
  /* and the kernels' arithmetic: tint.x = rings.x * (0.5 + warmth), warmth 0.5 */
  check(traced(answer, "rings", 0, &rings) == ENTELECHY_OK && fabs(field[y * width + x] - rings * 1.0) < 1e-6,
        "red is rings' red times (0.5 + 0.5)");
  entelechy_free(answer);

  /* a param changes what the next frame computes */
  status = entelechy_request(conn, "{\"op\":\"param\",\"name\":\"warmth\",\"value\":1.0}", &answer);
  check(status == ENTELECHY_OK, "param warmth = 1.0");
  entelechy_free(answer);
  check(entelechy_evaluate(conn, 0.5) == ENTELECHY_OK, "evaluate again");
  check(entelechy_read_f32(conn, "result", field, (size_t)width * (size_t)height * (size_t)components, &width, &height,
                           &components) == ENTELECHY_OK,
        "read again");
  check(fabs(field[y * width + x] - rings * 1.5) < 1e-6, "red is now rings' red times (0.5 + 1.0)");
  check(field[3 * width * height + y * width + x] == 1.0f, "alpha is 1");
  free(field);

  /* error answers: the answer line is still handed out, the message is in entelechy_error */
  status = entelechy_request(conn, "{\"id\":7,\"op\":\"frobnicate\"}", &answer);
  check(status == ENTELECHY_EANSWER, "an unknown op answers an error (ENTELECHY_EANSWER)");
  check(answer && entelechy_json_number(answer, "id", &number) == ENTELECHY_OK && number == 7, "the error echoes id 7");
  check(strncmp(entelechy_error(conn), "unknown op `frobnicate`", 23) == 0, "entelechy_error says: unknown op `frobnicate`");
  check(entelechy_json_string(answer, "error.operations.0", text, sizeof text) == ENTELECHY_OK && strcmp(text, "status") == 0,
        "the error lists the operations");
  entelechy_free(answer);
  check(entelechy_read_f32(conn, "nope", small, 4, &width, &height, &components) == ENTELECHY_EANSWER &&
            strstr(entelechy_error(conn), "no output `nope`") != NULL,
        "reading an output that does not exist: no output `nope`");
  check(entelechy_request(conn, "{\"op\":\n\"status\"}", &answer) == ENTELECHY_EARGUMENT && answer == NULL,
        "a request holding a newline is refused before it is sent");
  check(entelechy_request(conn, " \t", &answer) == ENTELECHY_EARGUMENT && answer == NULL &&
            strstr(entelechy_error(conn), "an empty request") != NULL,
        "an empty request is refused before it is sent (the session would never answer it)");
  check(entelechy_read_f32_fields(conn, "\"output\":\"result\",\"format\":\"png\"", small, 4, NULL) == ENTELECHY_EARGUMENT &&
            strstr(entelechy_error(conn), "leave \"format\" out") != NULL,
        "entelechy_read_f32_fields refuses a format of the caller's");

  /* quit ends this connection: the next request fails with ENTELECHY_EIO */
  status = entelechy_request(conn, "{\"op\":\"quit\"}", &answer);
  check(status == ENTELECHY_OK, "quit");
  entelechy_free(answer);
  check(entelechy_request(conn, "{\"op\":\"status\"}", &answer) == ENTELECHY_EIO && answer == NULL, "after quit: ENTELECHY_EIO");
  printf("# %s\n", entelechy_error(conn));
  entelechy_close(conn);

  /* nothing listening: NULL, and the reason */
  conn = entelechy_connect("127.0.0.1", 1, error, sizeof error);
  check(conn == NULL && strstr(error, "cannot connect to 127.0.0.1:1") != NULL, "connecting to a closed port says why");
  printf("# %s\n", error);

  printf("%s\n", failures ? "FAILED" : "all passed");
  return failures ? 1 : 0;
}
