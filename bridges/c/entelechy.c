/*
 * entelechy.c: the socket client behind entelechy.h. POSIX sockets, no other dependency: a
 * small JSON reader finds the few values the helpers need.
 */
#define _POSIX_C_SOURCE 200112L

#include "entelechy.h"

#include <errno.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/types.h>
#include <unistd.h>

#ifndef MSG_NOSIGNAL
#define MSG_NOSIGNAL 0 /* where it is missing, SO_NOSIGPIPE is set at connect instead */
#endif

/* Answers longer than this are refused (a 4096 x 4096 RGBA field read as f32 is ~350 MB). */
#define MAX_ANSWER_BYTES ((size_t)1 << 30)

struct entelechy {
  int fd;
  int broken; /* out of step (a timeout) or closed: no more requests */
  char *in;   /* bytes read but not yet handed out as answers */
  size_t in_len, in_cap;
  char error[1024];
};

static void set_error(entelechy *conn, const char *format, ...) {
  va_list args;
  va_start(args, format);
  vsnprintf(conn->error, sizeof conn->error, format, args);
  va_end(args);
}

/* ------------------------------------------------------------------------------------------- */
/* Connecting                                                                                    */
/* ------------------------------------------------------------------------------------------- */

entelechy *entelechy_connect(const char *host, int port, char *error, size_t error_size) {
  char service[16];
  struct addrinfo hints, *found = NULL, *a;
  int fd = -1, status, last_errno = 0;
  entelechy *conn;

  if (error && error_size) error[0] = '\0';
  if (!host || port <= 0 || port > 65535) {
    if (error && error_size) snprintf(error, error_size, "entelechy_connect: give a host and a port in 1..65535");
    return NULL;
  }
  snprintf(service, sizeof service, "%d", port);
  memset(&hints, 0, sizeof hints);
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  status = getaddrinfo(host, service, &hints, &found);
  if (status != 0) {
    if (error && error_size) snprintf(error, error_size, "cannot connect to %s:%d: %s", host, port, gai_strerror(status));
    return NULL;
  }
  for (a = found; a; a = a->ai_next) {
    fd = socket(a->ai_family, a->ai_socktype, a->ai_protocol);
    if (fd < 0) {
      last_errno = errno;
      continue;
    }
    if (connect(fd, a->ai_addr, a->ai_addrlen) == 0) break;
    last_errno = errno;
    close(fd);
    fd = -1;
  }
  freeaddrinfo(found);
  if (fd < 0) {
    if (error && error_size)
      snprintf(error, error_size, "cannot connect to %s:%d: %s%s", host, port, strerror(last_errno),
               last_errno == ECONNREFUSED ? " (is `entelechy serve SCENE --listen HOST:PORT` running?)" : "");
    return NULL;
  }
  {
    /* A request goes out as two writes (the line, then its newline): without this, Nagle's
       algorithm holds the second until the first is acknowledged, and delayed ACKs make that
       about 40 ms a request. */
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  }
#ifdef SO_NOSIGPIPE
  {
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, sizeof one);
  }
#endif
  conn = calloc(1, sizeof *conn);
  if (!conn) {
    close(fd);
    if (error && error_size) snprintf(error, error_size, "entelechy_connect: out of memory");
    return NULL;
  }
  conn->fd = fd;
  return conn;
}

int entelechy_set_timeout(entelechy *conn, int milliseconds) {
  struct timeval tv;
  if (!conn || milliseconds < 0) return ENTELECHY_EARGUMENT;
  tv.tv_sec = milliseconds / 1000;
  tv.tv_usec = (milliseconds % 1000) * 1000;
  if (setsockopt(conn->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) != 0 ||
      setsockopt(conn->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv) != 0) {
    set_error(conn, "cannot set the timeout: %s", strerror(errno));
    return ENTELECHY_EIO;
  }
  return ENTELECHY_OK;
}

void entelechy_close(entelechy *conn) {
  if (!conn) return;
  if (conn->fd >= 0) close(conn->fd);
  free(conn->in);
  free(conn);
}

void entelechy_free(char *answer) { free(answer); }

const char *entelechy_error(const entelechy *conn) { return conn ? conn->error : "no connection"; }

/* ------------------------------------------------------------------------------------------- */
/* One line out, one line in                                                                     */
/* ------------------------------------------------------------------------------------------- */

static int send_all(entelechy *conn, const char *bytes, size_t length) {
  while (length > 0) {
    ssize_t sent = send(conn->fd, bytes, length, MSG_NOSIGNAL);
    if (sent < 0 && errno == EINTR) continue;
    if (sent <= 0) {
      conn->broken = 1;
      set_error(conn, "cannot send the request: %s",
                errno == EAGAIN || errno == EWOULDBLOCK ? "timed out" : strerror(errno));
      return ENTELECHY_EIO;
    }
    bytes += sent;
    length -= (size_t)sent;
  }
  return ENTELECHY_OK;
}

/* Read until a newline is buffered; answers the line's length (without the newline). */
static int receive_line(entelechy *conn, size_t *line_length) {
  size_t scanned = 0;
  for (;;) {
    char *newline = conn->in_len > scanned ? memchr(conn->in + scanned, '\n', conn->in_len - scanned) : NULL;
    ssize_t got;
    if (newline) {
      *line_length = (size_t)(newline - conn->in);
      return ENTELECHY_OK;
    }
    scanned = conn->in_len;
    if (conn->in_cap - conn->in_len < 65536) {
      size_t cap = conn->in_cap ? conn->in_cap * 2 : 131072;
      char *grown;
      if (cap > MAX_ANSWER_BYTES) {
        conn->broken = 1;
        set_error(conn, "an answer longer than %lu bytes: refused", (unsigned long)MAX_ANSWER_BYTES);
        return ENTELECHY_EIO;
      }
      grown = realloc(conn->in, cap);
      if (!grown) {
        conn->broken = 1;
        set_error(conn, "out of memory reading an answer");
        return ENTELECHY_EIO;
      }
      conn->in = grown;
      conn->in_cap = cap;
    }
    got = recv(conn->fd, conn->in + conn->in_len, conn->in_cap - conn->in_len, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      conn->broken = 1;
      if (got == 0)
        set_error(conn, "the session closed the connection");
      else if (errno == EAGAIN || errno == EWOULDBLOCK)
        set_error(conn, "no answer within the timeout; the connection is out of step now: reconnect");
      else
        set_error(conn, "cannot read the answer: %s", strerror(errno));
      return ENTELECHY_EIO;
    }
    conn->in_len += (size_t)got;
  }
}

int entelechy_request(entelechy *conn, const char *line, char **answer) {
  size_t length, line_length;
  int status;
  char *copy;

  if (answer) *answer = NULL;
  if (!conn || !line || !answer) return ENTELECHY_EARGUMENT;
  length = strlen(line);
  while (length > 0 && (line[length - 1] == '\n' || line[length - 1] == '\r')) length--; /* a trailing newline is fine */
  if (memchr(line, '\n', length)) {
    set_error(conn, "a request is one line: this one holds a newline");
    return ENTELECHY_EARGUMENT;
  }
  if (strspn(line, " \t\r") >= length) {
    /* The session skips blank lines without an answer: waiting for one would wait for ever. */
    set_error(conn, "an empty request: send a JSON object such as {\"op\":\"status\"}");
    return ENTELECHY_EARGUMENT;
  }
  if (conn->broken) {
    if (!conn->error[0]) set_error(conn, "the connection is closed");
    return ENTELECHY_EIO;
  }
  conn->error[0] = '\0';
  if ((status = send_all(conn, line, length)) != ENTELECHY_OK) return status;
  if ((status = send_all(conn, "\n", 1)) != ENTELECHY_OK) return status;
  if ((status = receive_line(conn, &line_length)) != ENTELECHY_OK) return status;

  copy = malloc(line_length + 1);
  if (!copy) {
    set_error(conn, "out of memory copying the answer");
    return ENTELECHY_EIO;
  }
  memcpy(copy, conn->in, line_length);
  copy[line_length] = '\0';
  if (line_length > 0 && copy[line_length - 1] == '\r') copy[line_length - 1] = '\0';
  memmove(conn->in, conn->in + line_length + 1, conn->in_len - line_length - 1);
  conn->in_len -= line_length + 1;
  *answer = copy;

  if (entelechy_json_find(copy, "ok")) return ENTELECHY_OK;
  if (entelechy_json_find(copy, "error")) {
    if (entelechy_json_string(copy, "error.message", conn->error, sizeof conn->error) < 0 && !conn->error[0])
      set_error(conn, "the engine answered an error without a message");
    return ENTELECHY_EANSWER;
  }
  set_error(conn, "an answer with neither ok nor error");
  return ENTELECHY_EPROTOCOL;
}

/* ------------------------------------------------------------------------------------------- */
/* Helpers: evaluate, read floats                                                                */
/* ------------------------------------------------------------------------------------------- */

int entelechy_evaluate(entelechy *conn, double time) {
  char line[128], *answer = NULL;
  int status;
  if (!conn) return ENTELECHY_EARGUMENT;
  if (isnan(time))
    snprintf(line, sizeof line, "{\"op\":\"evaluate\"}");
  else if (isinf(time)) {
    set_error(conn, "entelechy_evaluate: the time must be finite");
    return ENTELECHY_EARGUMENT;
  } else
    snprintf(line, sizeof line, "{\"op\":\"evaluate\",\"time\":%.17g}", time);
  status = entelechy_request(conn, line, &answer);
  entelechy_free(answer);
  return status;
}

/* Append `text` as a JSON string (quoted, escaped) to out; answers the new length or 0 if it did not fit. */
static size_t append_json_string(char *out, size_t at, size_t cap, const char *text) {
  const unsigned char *p = (const unsigned char *)text;
  if (at + 1 >= cap) return 0;
  out[at++] = '"';
  for (; *p; p++) {
    char escaped[8];
    size_t n;
    if (*p == '"' || *p == '\\')
      n = (size_t)snprintf(escaped, sizeof escaped, "\\%c", *p);
    else if (*p < 0x20)
      n = (size_t)snprintf(escaped, sizeof escaped, "\\u%04x", *p);
    else {
      escaped[0] = (char)*p;
      n = 1;
    }
    if (at + n + 2 >= cap) return 0;
    memcpy(out + at, escaped, n);
    at += n;
  }
  out[at++] = '"';
  out[at] = '\0';
  return at;
}

static int base64_value(int c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

/*
 * Decode base64 little-endian f32 from a JSON string value (p at its opening quote) into buf.
 * Answers the number of floats, or -1 when the text is not base64 of whole floats.
 */
static long decode_floats(const char *p, float *buf, size_t cap) {
  uint32_t bits = 0;
  int have = 0, byte_in_float = 0;
  unsigned char bytes[4];
  size_t count = 0;
  if (*p++ != '"') return -1;
  for (; *p && *p != '"'; p++) {
    int v = base64_value((unsigned char)*p);
    if (*p == '=') break;
    if (v < 0) return -1;
    bits = (bits << 6) | (uint32_t)v;
    have += 6;
    if (have >= 8) {
      have -= 8;
      bytes[byte_in_float++] = (unsigned char)((bits >> have) & 0xff);
      if (byte_in_float == 4) {
        /* Little-endian on the wire, whatever this machine's byte order. */
        uint32_t u = (uint32_t)bytes[0] | (uint32_t)bytes[1] << 8 | (uint32_t)bytes[2] << 16 | (uint32_t)bytes[3] << 24;
        float f;
        memcpy(&f, &u, sizeof f);
        if (count < cap) buf[count] = f;
        count++;
        byte_in_float = 0;
      }
    }
  }
  return byte_in_float == 0 ? (long)count : -1;
}

int entelechy_read_f32_fields(entelechy *conn, const char *fields, float *buf, size_t cap, entelechy_shape *shape) {
  char *line, *answer = NULL;
  const char *data;
  size_t line_size = 64 + (fields ? strlen(fields) : 0);
  double width = 0, height = 0, depth = 1, components = 1, frame = 0;
  long count;
  int status;

  if (!conn || (!buf && cap > 0)) return ENTELECHY_EARGUMENT;
  if (fields && strstr(fields, "\"format\"")) {
    set_error(conn, "entelechy_read_f32_fields reads floats: leave \"format\" out of its fields (entelechy_request reads a PNG)");
    return ENTELECHY_EARGUMENT;
  }
  line = malloc(line_size);
  if (!line) {
    set_error(conn, "out of memory");
    return ENTELECHY_EIO;
  }
  snprintf(line, line_size, "{\"op\":\"read\",\"format\":\"f32\"%s%s}", fields && *fields ? "," : "", fields ? fields : "");
  status = entelechy_request(conn, line, &answer);
  free(line);
  if (status != ENTELECHY_OK) {
    entelechy_free(answer);
    return status;
  }
  if (entelechy_json_number(answer, "ok.width", &width) != 0 || entelechy_json_number(answer, "ok.height", &height) != 0 ||
      !(data = entelechy_json_find(answer, "ok.data"))) {
    set_error(conn, "the read answer lacks width, height or data");
    entelechy_free(answer);
    return ENTELECHY_EPROTOCOL;
  }
  entelechy_json_number(answer, "ok.depth", &depth);
  entelechy_json_number(answer, "ok.components", &components);
  entelechy_json_number(answer, "ok.frame", &frame);
  if (shape) {
    shape->width = (int)width;
    shape->height = (int)height;
    shape->depth = (int)depth;
    shape->components = (int)components;
    shape->frame = (long)frame;
  }
  count = decode_floats(data, buf, cap);
  entelechy_free(answer);
  if (count < 0 || (double)count != width * height * depth * components) {
    set_error(conn, "the read answer's data is not %g x %g x %g x %g floats", width, height, depth, components);
    return ENTELECHY_EPROTOCOL;
  }
  if ((size_t)count > cap) {
    set_error(conn, "the field holds %ld floats; the buffer takes %lu", count, (unsigned long)cap);
    return ENTELECHY_ESPACE;
  }
  return ENTELECHY_OK;
}

int entelechy_read_f32(entelechy *conn, const char *output, float *buf, size_t cap, int *width, int *height,
                       int *components) {
  char fields[512];
  entelechy_shape shape = {0, 0, 0, 0, 0};
  int status;
  if (!conn) return ENTELECHY_EARGUMENT;
  fields[0] = '\0';
  if (output) {
    size_t at;
    strcpy(fields, "\"output\":");
    at = append_json_string(fields, strlen(fields), sizeof fields, output);
    if (at == 0) {
      set_error(conn, "entelechy_read_f32: the output name is too long");
      return ENTELECHY_EARGUMENT;
    }
  }
  status = entelechy_read_f32_fields(conn, fields, buf, cap, &shape);
  if (width) *width = shape.width;
  if (height) *height = shape.height * (shape.depth > 1 ? shape.depth : 1); /* 3-D: depth slices stacked */
  if (components) *components = shape.components;
  return status;
}

/* ------------------------------------------------------------------------------------------- */
/* A small JSON reader: find a value by path, read a number or a string                          */
/* ------------------------------------------------------------------------------------------- */

static const char *skip_space(const char *p) {
  while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
  return p;
}

/* p at a value: answers just past it, or NULL when it is not well formed. */
static const char *skip_value(const char *p, int depth) {
  p = skip_space(p);
  if (depth > 512) return NULL;
  if (*p == '"') {
    for (p++; *p && *p != '"'; p++)
      if (*p == '\\' && !*++p) return NULL;
    return *p == '"' ? p + 1 : NULL;
  }
  if (*p == '{' || *p == '[') {
    char close = *p == '{' ? '}' : ']';
    p = skip_space(p + 1);
    if (*p == close) return p + 1;
    for (;;) {
      if (close == '}') {
        p = skip_value(p, depth + 1); /* the key */
        if (!p) return NULL;
        p = skip_space(p);
        if (*p++ != ':') return NULL;
      }
      p = skip_value(p, depth + 1);
      if (!p) return NULL;
      p = skip_space(p);
      if (*p == ',') {
        p = skip_space(p + 1);
        continue;
      }
      return *p == close ? p + 1 : NULL;
    }
  }
  if (!*p || *p == ',' || *p == '}' || *p == ']' || *p == ':') return NULL;
  while (*p && *p != ',' && *p != '}' && *p != ']' && *p != ' ' && *p != '\n' && *p != '\r' && *p != '\t') p++;
  return p;
}

/* In the object or array at p, the value named by the segment [name, name + length). */
static const char *member(const char *p, const char *name, size_t length) {
  p = skip_space(p);
  if (*p == '{') {
    p = skip_space(p + 1);
    if (*p == '}') return NULL;
    for (;;) {
      const char *key = p + 1, *end;
      if (*p != '"' || !(end = skip_value(p, 0))) return NULL;
      /* Keys are compared as written (the protocol's keys hold no escapes). */
      int match = (size_t)(end - 1 - key) == length && memcmp(key, name, length) == 0;
      p = skip_space(end);
      if (*p++ != ':') return NULL;
      p = skip_space(p);
      if (match) return p;
      if (!(p = skip_value(p, 0))) return NULL;
      p = skip_space(p);
      if (*p != ',') return NULL;
      p = skip_space(p + 1);
    }
  }
  if (*p == '[') {
    size_t index = 0, i;
    if (length == 0) return NULL;
    for (i = 0; i < length; i++) {
      if (name[i] < '0' || name[i] > '9') return NULL;
      index = index * 10 + (size_t)(name[i] - '0');
    }
    p = skip_space(p + 1);
    if (*p == ']') return NULL;
    for (i = 0;; i++) {
      if (i == index) return p;
      if (!(p = skip_value(p, 0))) return NULL;
      p = skip_space(p);
      if (*p != ',') return NULL;
      p = skip_space(p + 1);
    }
  }
  return NULL;
}

const char *entelechy_json_find(const char *json, const char *path) {
  const char *p = json;
  if (!json || !path) return NULL;
  while (*path) {
    const char *dot = strchr(path, '.');
    size_t length = dot ? (size_t)(dot - path) : strlen(path);
    if (!(p = member(p, path, length))) return NULL;
    path += length + (dot ? 1 : 0);
  }
  return skip_space(p);
}

int entelechy_json_number(const char *json, const char *path, double *out) {
  const char *p = entelechy_json_find(json, path);
  char *end;
  double value;
  if (!p) return ENTELECHY_EPROTOCOL;
  if (strncmp(p, "true", 4) == 0) value = 1;
  else if (strncmp(p, "false", 5) == 0) value = 0;
  else {
    value = strtod(p, &end);
    if (end == p) return ENTELECHY_EPROTOCOL;
  }
  if (out) *out = value;
  return ENTELECHY_OK;
}

static int hex4(const char *p, unsigned *out) {
  unsigned v = 0;
  int i;
  for (i = 0; i < 4; i++) {
    char c = p[i];
    v <<= 4;
    if (c >= '0' && c <= '9') v |= (unsigned)(c - '0');
    else if (c >= 'a' && c <= 'f') v |= (unsigned)(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F') v |= (unsigned)(c - 'A' + 10);
    else return -1;
  }
  *out = v;
  return 0;
}

int entelechy_json_string(const char *json, const char *path, char *out, size_t out_size) {
  const char *p = entelechy_json_find(json, path);
  size_t at = 0;
  int cut = 0;
  if (!out || out_size == 0) return ENTELECHY_EARGUMENT;
  out[0] = '\0';
  if (!p || *p != '"') return ENTELECHY_EPROTOCOL;
  for (p++; *p && *p != '"'; p++) {
    char bytes[4];
    size_t n = 1;
    unsigned code;
    bytes[0] = *p;
    if (*p == '\\') {
      p++;
      switch (*p) {
        case 'n': bytes[0] = '\n'; break;
        case 't': bytes[0] = '\t'; break;
        case 'r': bytes[0] = '\r'; break;
        case 'b': bytes[0] = '\b'; break;
        case 'f': bytes[0] = '\f'; break;
        case 'u':
          if (hex4(p + 1, &code) != 0) return ENTELECHY_EPROTOCOL;
          p += 4;
          if (code >= 0xd800 && code < 0xdc00 && p[1] == '\\' && p[2] == 'u') {
            unsigned low;
            if (hex4(p + 3, &low) == 0 && low >= 0xdc00 && low < 0xe000) {
              code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
              p += 6;
            }
          }
          /* UTF-8 */
          if (code < 0x80) bytes[0] = (char)code;
          else if (code < 0x800) {
            bytes[0] = (char)(0xc0 | (code >> 6));
            bytes[1] = (char)(0x80 | (code & 0x3f));
            n = 2;
          } else if (code < 0x10000) {
            bytes[0] = (char)(0xe0 | (code >> 12));
            bytes[1] = (char)(0x80 | ((code >> 6) & 0x3f));
            bytes[2] = (char)(0x80 | (code & 0x3f));
            n = 3;
          } else {
            bytes[0] = (char)(0xf0 | (code >> 18));
            bytes[1] = (char)(0x80 | ((code >> 12) & 0x3f));
            bytes[2] = (char)(0x80 | ((code >> 6) & 0x3f));
            bytes[3] = (char)(0x80 | (code & 0x3f));
            n = 4;
          }
          break;
        case '\0': return ENTELECHY_EPROTOCOL;
        default: bytes[0] = *p; break; /* \" \\ \/ */
      }
    }
    if (at + n >= out_size) {
      cut = 1;
      break;
    }
    memcpy(out + at, bytes, n);
    at += n;
  }
  out[at] = '\0';
  return cut ? ENTELECHY_ESPACE : ENTELECHY_OK;
}
