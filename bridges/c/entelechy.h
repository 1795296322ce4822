/*
 * entelechy.h: a C client of an Entelechy session.
 *
 * In this implementation C reaches the engine over a socket: start
 * `entelechy serve SCENE --listen 127.0.0.1:PORT` and connect to that port. Requests and answers
 * are the protocol's JSON lines (docs/protocol.md). The in-process door is the TypeScript API
 * (`Session.request`).
 *
 * Ownership: a connection is yours from entelechy_connect until entelechy_close. An answer from
 * entelechy_request is yours: release it with entelechy_free. Strings you pass are only read,
 * during the call. Buffers you pass are written, never kept. A connection is for one thread at a time.
 */
#ifndef ENTELECHY_H
#define ENTELECHY_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Results: 0 is success, the rest are negative. */
enum {
  ENTELECHY_OK = 0,
  ENTELECHY_EIO = -1,       /* the connection failed, closed or timed out (see entelechy_error) */
  ENTELECHY_EANSWER = -2,   /* the engine answered an error: entelechy_error holds its message */
  ENTELECHY_ESPACE = -3,    /* the caller's buffer is too small (sizes are still reported) */
  ENTELECHY_EPROTOCOL = -4, /* an answer this client cannot read */
  ENTELECHY_EARGUMENT = -5  /* a bad argument (e.g. a request line holding a newline) */
};

typedef struct entelechy entelechy;

/*
 * Connect to `host` (name or address) and `port`, as `--listen` printed them. On failure answers
 * NULL and, when `error` is not NULL, writes why into it (at most error_size bytes, terminated).
 */
entelechy *entelechy_connect(const char *host, int port, char *error, size_t error_size);

/*
 * Milliseconds to wait for an answer (and to send); 0 waits forever (the default). A timed-out
 * connection is out of step with its answers: later requests fail with ENTELECHY_EIO; reconnect.
 */
int entelechy_set_timeout(entelechy *conn, int milliseconds);

/*
 * One request line in (a JSON object, without a newline), its answer line out: *answer receives
 * a NUL-terminated copy that the caller releases with entelechy_free. Returns ENTELECHY_OK for an
 * `ok` answer, ENTELECHY_EANSWER for an `error` answer (*answer is still set; the message is in
 * entelechy_error), ENTELECHY_EIO when no answer came (*answer is NULL).
 */
int entelechy_request(entelechy *conn, const char *line, char **answer);

/* Release an answer of entelechy_request (NULL is fine). */
void entelechy_free(char *answer);

/* Close the connection and release it (NULL is fine). */
void entelechy_close(entelechy *conn);

/* The last problem on this connection, in words (an engine error's message, or an I/O failure). */
const char *entelechy_error(const entelechy *conn);

/* Evaluate a frame at `time` seconds; a NaN time leaves the clock as it is. */
int entelechy_evaluate(entelechy *conn, double time);

/*
 * Read an output as floats into buf (cap floats): component-major planes, each width x height,
 * rows of width floats. `output` NULL reads the first output. width, height and components are
 * set (any may be NULL) also when ENTELECHY_ESPACE says buf is too small. For a 3-D field height
 * counts height x depth rows (the depth slices one after another); entelechy_read_f32_fields
 * reports depth apart.
 */
int entelechy_read_f32(entelechy *conn, const char *output, float *buf, size_t cap, int *width, int *height,
                       int *components);

/* The shape of what entelechy_read_f32_fields read (depth is 1 for a 2-D field). */
typedef struct {
  int width, height, depth, components;
  long frame;
} entelechy_shape;

/*
 * The general read: `fields` are JSON members added to the request, e.g.
 * "\"node\":\"board\",\"port\":\"cells\"" or "\"region\":{\"x\":0,\"y\":0,\"width\":8,\"height\":8}"
 * (NULL: the first output). Floats: component-major planes, each width x height x depth.
 */
int entelechy_read_f32_fields(entelechy *conn, const char *fields, float *buf, size_t cap, entelechy_shape *shape);

/*
 * A small reader for answers. `path` names a value by keys and array indexes joined by dots:
 * "ok.width", "error.message", "ok.values.1.value.0". entelechy_json_find answers a pointer to
 * the value's text inside `json` (or NULL). entelechy_json_number reads a number (or true/false
 * as 1/0). entelechy_json_string decodes a string into out (ENTELECHY_ESPACE when it was cut).
 */
const char *entelechy_json_find(const char *json, const char *path);
int entelechy_json_number(const char *json, const char *path, double *out);
int entelechy_json_string(const char *json, const char *path, char *out, size_t out_size);

#ifdef __cplusplus
}
#endif

#endif /* ENTELECHY_H */
