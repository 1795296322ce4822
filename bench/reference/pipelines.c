/*
 * Entelechy benchmark: C reference implementations of the pipelines P1-P4
 * (definitions: /work/shared/bench/PIPELINES.md; shared conventions:
 * bench/reference/measurement.ts).
 *
 * Plain portable C99/C11 + libm (sinf, sqrtf), float32 fields, row-major,
 * rgba fields INTERLEAVED (r g b a per element, 16 bytes), P3 cells one float.
 * Parallelised over rows with `#pragma omp parallel for schedule(dynamic, 16)`
 * when compiled with -fopenmp; without OpenMP it runs on one thread.
 * Intended flags: -O3 -march=native -ffast-math -fopenmp ... -lm
 *
 * usage: pipelines P1|P2|P3|P4 WIDTH HEIGHT RUNS THREADS [--steps N] [--dump FILE] [--p4-scalar]
 *   one warm-up run, then RUNS timed runs; prints ONE JSON line:
 *   {"pipeline","width","height","system":"c","workers","runs":[ms...],
 *    "median_ms","mpix_s","checksum"[,"note"]}
 *   checksum: sum of all output floats in double, in index order (P3: of the
 *   cells after the steps). P3: one run = N steps (default 10, double-buffered,
 *   re-initialised before every run outside the timed region); mpix_s is per step.
 *   --steps N  (P3 only) number of Life steps per run, for tests (N >= 0).
 *   --dump F   write the output field of the last run to F as raw float32
 *              (native byte order), for tests.
 *   --p4-scalar  P4 with the one-pixel-at-a-time loop instead of the lane blocks
 *              (same rule, see the P4 section); the JSON gets a "note".
 */
#if !defined(_POSIX_C_SOURCE) && !defined(_WIN32)
#define _POSIX_C_SOURCE 199309L
#endif
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#define TAU_F 6.283185307179586f
#define RINGS_COUNT 8.0f
#define RINGS_TIME 0.5f
#define WARMTH 0.9f
#define P4_MAX_ITER 256

/* ---------------------------------------------------------------- timing */

static double now_ms(void) {
#if defined(CLOCK_MONOTONIC)
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
#else
  struct timespec ts;
  timespec_get(&ts, TIME_UTC);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
#endif
}

/* ---------------------------------------------------------------- P1 / rings */

/* rings(x, y) written to o[0..3]; tint is applied by the caller when fused. */
static inline float ring_value(int x, int y, int W, int H) {
  const float px = ((float)x + 0.5f) / (float)W - 0.5f;
  const float py = ((float)y + 0.5f) / (float)H - 0.5f;
  const float r = sqrtf(px * px + py * py) * RINGS_COUNT + RINGS_TIME;
  return 0.5f + 0.5f * sinf(r * TAU_F);
}

/* P1: rings then tint, fused: rings is never materialised. */
static void p1(float *restrict out, int W, int H) {
  const float kr = 0.5f + WARMTH, kb = 1.5f - WARMTH;
#pragma omp parallel for schedule(dynamic, 16)
  for (int y = 0; y < H; y++) {
    float *restrict o = out + (size_t)4 * (size_t)W * (size_t)y;
    for (int x = 0; x < W; x++) {
      const float v = ring_value(x, y, W, H);
      o[4 * x + 0] = v * kr;          /* r = v          * (0.5 + warmth) */
      o[4 * x + 1] = 0.8f * v;        /* g = 0.8 v                       */
      o[4 * x + 2] = (0.6f * v) * kb; /* b = 0.6 v      * (1.5 - warmth) */
      o[4 * x + 3] = 1.0f;            /* a = 1                           */
    }
  }
}

/* ---------------------------------------------------------------- P2 */

static void rings(float *restrict out, int W, int H) {
#pragma omp parallel for schedule(dynamic, 16)
  for (int y = 0; y < H; y++) {
    float *restrict o = out + (size_t)4 * (size_t)W * (size_t)y;
    for (int x = 0; x < W; x++) {
      const float v = ring_value(x, y, W, H);
      o[4 * x + 0] = v;
      o[4 * x + 1] = 0.8f * v;
      o[4 * x + 2] = 0.6f * v;
      o[4 * x + 3] = 1.0f;
    }
  }
}

static inline int clampi(int v, int lo, int hi) { return v < lo ? lo : (v > hi ? hi : v); }

/* 5x5 mean of element x of the five (already y-clamped) rows, x clamped. */
static inline void blur_edge(const float *const rows[5], float *restrict d, int x, int W) {
  float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
  for (int k = 0; k < 5; k++) {
    for (int dx = -2; dx <= 2; dx++) {
      const float *p = rows[k] + 4 * clampi(x + dx, 0, W - 1);
      s0 += p[0]; s1 += p[1]; s2 += p[2]; s3 += p[3];
    }
  }
  const float inv = 1.0f / 25.0f;
  d[4 * x + 0] = s0 * inv; d[4 * x + 1] = s1 * inv;
  d[4 * x + 2] = s2 * inv; d[4 * x + 3] = s3 * inv;
}

/* Direct 25-tap gather (the work the definition describes; no separable trick). */
static void blur5(const float *restrict src, float *restrict dst, int W, int H) {
#pragma omp parallel for schedule(dynamic, 16)
  for (int y = 0; y < H; y++) {
    const float *rows[5];
    for (int k = 0; k < 5; k++)
      rows[k] = src + (size_t)4 * (size_t)W * (size_t)clampi(y + k - 2, 0, H - 1);
    float *restrict d = dst + (size_t)4 * (size_t)W * (size_t)y;
    const int lo = W < 2 ? W : 2;           /* left edge columns  [0, lo)   */
    const int hi = W - 2 > lo ? W - 2 : lo; /* right edge columns [hi, W)   */
    for (int x = 0; x < lo; x++) blur_edge(rows, d, x, W);
    /* interior: with interleaved rgba, float j's horizontal neighbours are j +- 4, j +- 8 */
    const float *r0 = rows[0], *r1 = rows[1], *r2 = rows[2], *r3 = rows[3], *r4 = rows[4];
    const float inv = 1.0f / 25.0f;
    for (int j = 4 * lo; j < 4 * hi; j++) {
      float s = 0.0f;
      s += r0[j - 8] + r0[j - 4] + r0[j] + r0[j + 4] + r0[j + 8];
      s += r1[j - 8] + r1[j - 4] + r1[j] + r1[j + 4] + r1[j + 8];
      s += r2[j - 8] + r2[j - 4] + r2[j] + r2[j + 4] + r2[j + 8];
      s += r3[j - 8] + r3[j - 4] + r3[j] + r3[j + 4] + r3[j + 8];
      s += r4[j - 8] + r4[j - 4] + r4[j] + r4[j + 4] + r4[j + 8];
      d[j] = s * inv;
    }
    for (int x = hi; x < W; x++) blur_edge(rows, d, x, W);
  }
}

/* ---------------------------------------------------------------- P3 */

static uint32_t p3_hash(uint32_t x, uint32_t y) {
  /* uint32 wrap-around products; same as JS Math.imul and as the exact formula */
  return ((x * 73856093u) ^ (y * 19349663u)) & 0x7fffffffu;
}

static void life_init(float *cells, int W, int H) {
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++)
      cells[(size_t)y * (size_t)W + (size_t)x] = (p3_hash((uint32_t)x, (uint32_t)y) % 3u == 0u) ? 1.0f : 0.0f;
}

static inline float life_rule(float n, float c) {
  return (n == 3.0f || (c == 1.0f && n == 2.0f)) ? 1.0f : 0.0f;
}

static inline float life_edge(const float *a, const float *b, const float *c, int x, int W) {
  const int xm = x == 0 ? W - 1 : x - 1, xp = x == W - 1 ? 0 : x + 1;
  const float n = a[xm] + a[x] + a[xp] + b[xm] + b[xp] + c[xm] + c[x] + c[xp];
  return life_rule(n, b[x]);
}

static void life_step(const float *restrict src, float *restrict dst, int W, int H) {
#pragma omp parallel for schedule(dynamic, 16)
  for (int y = 0; y < H; y++) {
    const int ym = y == 0 ? H - 1 : y - 1, yp = y == H - 1 ? 0 : y + 1;
    const float *a = src + (size_t)W * (size_t)ym;
    const float *b = src + (size_t)W * (size_t)y;
    const float *c = src + (size_t)W * (size_t)yp;
    float *restrict d = dst + (size_t)W * (size_t)y;
    d[0] = life_edge(a, b, c, 0, W);
    for (int x = 1; x < W - 1; x++) {
      const float n = a[x - 1] + a[x] + a[x + 1] + b[x - 1] + b[x + 1] + c[x - 1] + c[x] + c[x + 1];
      d[x] = life_rule(n, b[x]);
    }
    if (W > 1) d[W - 1] = life_edge(a, b, c, W - 1, W);
  }
}

/* ---------------------------------------------------------------- P4 */

/*
 * Two implementations with the same per-pixel result (i = iterations done while
 * |z|^2 <= 4, at most 256; v = i / 256):
 *
 * p4 (default): pixels in blocks of P4_LANES along the row. Each iteration updates
 *   every lane whose |z|^2 <= 4 (escaped lanes are frozen and stop counting: the
 *   early exit per pixel), and the block stops as soon as no lane is active. The
 *   lane loop is branch-free, so -O3 auto-vectorises it (several vectors in flight),
 *   the C counterpart of the WASM f32x4 x 4-interleaved loop. 64 lanes measured best
 *   on a 2-core EPYC with GCC 12 (AVX-512: 4 zmm in flight, 97 Mpix/s/thread; with
 *   256-bit vectors: 77; 32 lanes: 53; 16 lanes: 15 as GCC then does not vectorise).
 * p4_scalar (--p4-scalar): the textbook loop, one pixel at a time with `while`;
 *   latency-bound and not vectorisable (~9 Mpix/s/thread here).
 */
#define P4_LANES 64

static void p4(float *restrict out, int W, int H) {
#pragma omp parallel for schedule(dynamic, 16)
  for (int y = 0; y < H; y++) {
    const float cy = -1.5f + 3.0f * ((float)y + 0.5f) / (float)H;
    float *restrict o = out + (size_t)4 * (size_t)W * (size_t)y;
    for (int x0 = 0; x0 < W; x0 += P4_LANES) {
      float cx[P4_LANES], zr[P4_LANES], zi[P4_LANES], cnt[P4_LANES];
      for (int l = 0; l < P4_LANES; l++) { /* lanes past the edge: cx > 1, escape at once */
        cx[l] = -2.0f + 3.0f * ((float)(x0 + l) + 0.5f) / (float)W;
        zr[l] = 0.0f; zi[l] = 0.0f; cnt[l] = 0.0f;
      }
      for (int it = 0; it < P4_MAX_ITER; it++) {
        int active = 0;
        for (int l = 0; l < P4_LANES; l++) {
          const float r2 = zr[l] * zr[l], i2 = zi[l] * zi[l];
          const int in = r2 + i2 <= 4.0f;
          const float nr = r2 - i2 + cx[l];
          const float ni = 2.0f * zr[l] * zi[l] + cy;
          zr[l] = in ? nr : zr[l];
          zi[l] = in ? ni : zi[l];
          cnt[l] += in ? 1.0f : 0.0f;
          active |= in;
        }
        if (!active) break;
      }
      const int n = W - x0 < P4_LANES ? W - x0 : P4_LANES;
      for (int l = 0; l < n; l++) {
        const float v = cnt[l] / (float)P4_MAX_ITER;
        float *restrict q = o + (size_t)4 * (size_t)(x0 + l);
        q[0] = v;
        q[1] = v * v;
        q[2] = sqrtf(v);
        q[3] = 1.0f;
      }
    }
  }
}

static void p4_scalar(float *restrict out, int W, int H) {
#pragma omp parallel for schedule(dynamic, 16)
  for (int y = 0; y < H; y++) {
    const float cy = -1.5f + 3.0f * ((float)y + 0.5f) / (float)H;
    float *restrict o = out + (size_t)4 * (size_t)W * (size_t)y;
    for (int x = 0; x < W; x++) {
      const float cx = -2.0f + 3.0f * ((float)x + 0.5f) / (float)W;
      float zr = 0.0f, zi = 0.0f;
      int i = 0;
      while (i < P4_MAX_ITER && zr * zr + zi * zi <= 4.0f) {
        const float t = zr * zr - zi * zi + cx;
        zi = 2.0f * zr * zi + cy;
        zr = t;
        i++;
      }
      const float v = (float)i / (float)P4_MAX_ITER;
      o[4 * x + 0] = v;
      o[4 * x + 1] = v * v;
      o[4 * x + 2] = sqrtf(v);
      o[4 * x + 3] = 1.0f;
    }
  }
}

/* ---------------------------------------------------------------- driver */

static double checksum(const float *p, size_t n) {
  double s = 0.0;
  for (size_t i = 0; i < n; i++) s += (double)p[i];
  return s;
}

static int cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static void *xmalloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (!p) {
    fprintf(stderr, "pipelines: out of memory (%zu bytes)\n", n);
    exit(2);
  }
  return p;
}

static int usage(void) {
  fprintf(stderr, "usage: pipelines P1|P2|P3|P4 WIDTH HEIGHT RUNS THREADS [--steps N] [--dump FILE] [--p4-scalar]\n");
  return 2;
}

static int parse_pos(const char *s, long max, long *out) {
  char *end;
  long v = strtol(s, &end, 10);
  if (*s == '\0' || *end != '\0' || v < 0 || v > max) return 0;
  *out = v;
  return 1;
}

int main(int argc, char **argv) {
  if (argc < 6) return usage();
  const char *name = argv[1];
  int pl;
  if (strcmp(name, "P1") == 0) pl = 1;
  else if (strcmp(name, "P2") == 0) pl = 2;
  else if (strcmp(name, "P3") == 0) pl = 3;
  else if (strcmp(name, "P4") == 0) pl = 4;
  else return usage();
  long W, H, runs, threads, steps = 10;
  const char *dump = NULL;
  int p4_scalar_loop = 0;
  if (!parse_pos(argv[2], 1L << 20, &W) || W < 1 || !parse_pos(argv[3], 1L << 20, &H) || H < 1 ||
      !parse_pos(argv[4], 100000, &runs) || runs < 1 || !parse_pos(argv[5], 4096, &threads) || threads < 1)
    return usage();
  for (int a = 6; a < argc; a++) {
    if (strcmp(argv[a], "--steps") == 0 && a + 1 < argc) {
      if (!parse_pos(argv[++a], 1000000, &steps)) return usage();
    } else if (strcmp(argv[a], "--dump") == 0 && a + 1 < argc) {
      dump = argv[++a];
    } else if (strcmp(argv[a], "--p4-scalar") == 0) {
      p4_scalar_loop = 1;
    } else {
      return usage();
    }
  }
  if (pl != 3) steps = 1;

  int workers = 1;
  const char *note = NULL;
#ifdef _OPENMP
  omp_set_dynamic(0);
  omp_set_num_threads((int)threads);
  workers = (int)threads;
#else
  if (threads != 1) note = "compiled without OpenMP: ran on 1 thread";
#endif
  if (pl == 4 && p4_scalar_loop)
    note = note ? "P4 scalar per-pixel loop; compiled without OpenMP: ran on 1 thread" : "P4 scalar per-pixel loop";

  const size_t npix = (size_t)W * (size_t)H;
  const size_t nout = pl == 3 ? npix : 4 * npix;
  float *out = xmalloc(nout * sizeof(float));
  float *tmp = NULL, *init = NULL;
  if (pl == 2) tmp = xmalloc(4 * npix * sizeof(float));
  if (pl == 3) {
    tmp = xmalloc(npix * sizeof(float));
    init = xmalloc(npix * sizeof(float));
    life_init(init, (int)W, (int)H);
  }

  double *times = xmalloc((size_t)runs * sizeof(double));
  const float *result = out;
  for (long r = -1; r < runs; r++) { /* r = -1: warm-up */
    if (pl == 3) memcpy(out, init, npix * sizeof(float)); /* outside the timed region */
    const double t0 = now_ms();
    switch (pl) {
      case 1: p1(out, (int)W, (int)H); break;
      case 2: rings(tmp, (int)W, (int)H); blur5(tmp, out, (int)W, (int)H); break;
      case 3: {
        float *s = out, *d = tmp;
        for (long k = 0; k < steps; k++) {
          life_step(s, d, (int)W, (int)H);
          float *t = s; s = d; d = t;
        }
        result = s;
        break;
      }
      default:
        if (p4_scalar_loop) p4_scalar(out, (int)W, (int)H);
        else p4(out, (int)W, (int)H);
        break;
    }
    const double t1 = now_ms();
    if (r >= 0) times[r] = t1 - t0;
  }

  const double sum = checksum(result, nout);
  double *sorted = xmalloc((size_t)runs * sizeof(double));
  memcpy(sorted, times, (size_t)runs * sizeof(double));
  qsort(sorted, (size_t)runs, sizeof(double), cmp_double);
  const double med = runs % 2 ? sorted[runs / 2] : 0.5 * (sorted[runs / 2 - 1] + sorted[runs / 2]);
  const double per_run_pixels = (double)npix * (pl == 3 ? (double)steps : 1.0);
  const double mpix = med > 0.0 ? per_run_pixels / (med / 1000.0) / 1e6 : 0.0;

  if (dump) {
    FILE *f = fopen(dump, "wb");
    if (!f || fwrite(result, sizeof(float), nout, f) != nout || fclose(f) != 0) {
      fprintf(stderr, "pipelines: cannot write %s\n", dump);
      return 1;
    }
  }

  printf("{\"pipeline\":\"%s\",\"width\":%ld,\"height\":%ld,\"system\":\"c\",\"workers\":%d,\"runs\":[",
         name, W, H, workers);
  for (long r = 0; r < runs; r++) printf(r ? ",%.4f" : "%.4f", times[r]);
  printf("],\"median_ms\":%.4f,\"mpix_s\":%.3f,\"checksum\":%.17g", med, mpix, sum);
  if (pl == 3 && steps != 10) printf(",\"steps\":%ld", steps);
  if (note) printf(",\"note\":\"%s\"", note);
  printf("}\n");

  free(sorted); free(times); free(init); free(tmp); free(out);
  return 0;
}
