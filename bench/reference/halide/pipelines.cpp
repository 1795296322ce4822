/*
 * Entelechy benchmark: the pipelines P1-P4 (/work/shared/bench/PIPELINES.md) in Halide 14,
 * JIT-compiled, with hand-written schedules of the kind a Halide user writes: rows split into
 * strips run in parallel, x vectorised at the target's natural width, interleaved rgba stores
 * (c innermost, unrolled), the blur's input kept in a sliding window of rows, P4's lanes in
 * blocks of four vectors. The arithmetic follows bench/reference/pipelines.c (the C reference),
 * so that the checksums agree with it; the driver prints the same JSON line, with
 * "system":"halide" and the JIT compile time as "compile_ms".
 *
 * usage: pipelines-halide P1|P2|P3|P4 WIDTH HEIGHT RUNS THREADS [--steps N] [--fast-sin]
 *   --fast-sin: P1/P2 with Halide's vectorised fast_sin (error < 1e-5) instead of sin, which
 *   calls libm's sinf once per lane (an experiment: not C's arithmetic; the note says so).
 *   THREADS: the Halide runtime's thread count (HL_NUM_THREADS, set here before the first run).
 *   One JIT compile (timed apart), one warm-up run, RUNS timed runs; P3: one run = N steps
 *   (default 10), re-initialised before each run outside the timed region, mpix_s per step.
 *
 * Built by bench/reference/halide/build.ts with g++ against Debian's libhalide14-0-dev.
 */
#include "Halide.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace Halide;

static const float TAU_F = 6.283185307179586f;
static const float RINGS_COUNT = 8.0f, RINGS_TIME = 0.5f, WARMTH = 0.9f;
static const int P4_MAX_ITER = 256;

static double now_ms() {
  using namespace std::chrono;
  return duration<double, std::milli>(steady_clock::now().time_since_epoch()).count();
}

/* The size is a parameter of the compiled pipeline, as in a real Halide program. */
static Param<int> W("W"), H("H");
static Var x("x"), y("y"), c("c"), xo("xo"), xi("xi"), yo("yo"), yi("yi");

static bool use_fast_sin = false;

/* rings' value at (x, y): the C reference's ring_value(). */
static Expr ring_value(Expr xx, Expr yy) {
  Expr px = (cast<float>(xx) + 0.5f) / cast<float>(W) - 0.5f;
  Expr py = (cast<float>(yy) + 0.5f) / cast<float>(H) - 0.5f;
  Expr r = sqrt(px * px + py * py) * RINGS_COUNT + RINGS_TIME;
  return 0.5f + 0.5f * (use_fast_sin ? fast_sin(r * TAU_F) : sin(r * TAU_F));
}

/* Rows in strips of `rows`, strips in parallel; a guard (not a shifted last strip) at the
 * bottom edge, so any height works. */
static void parallel_rows(Func f, int rows) {
  f.split(y, yo, yi, rows, TailStrategy::GuardWithIf).parallel(yo);
}

/* An rgba output written interleaved: c innermost and unrolled, x vectorised (the last vector of
 * a row shifts inwards and overlaps the one before: a guard there would double the compile time
 * of P2, whose 25 clamped taps the loop partitioner already splits nine ways). */
static void interleaved(Func f, int vec) {
  f.bound(c, 0, 4).reorder(c, x, y).unroll(c).vectorize(x, vec);
  f.output_buffer().dim(0).set_stride(4).dim(2).set_stride(1);
}

/* P1: rings then tint, fused. The ring value is computed once per vector of pixels. */
static Func p1(int vec) {
  Func v("v"), out("p1");
  v(x, y) = ring_value(x, y);
  const float kr = 0.5f + WARMTH, kb = 1.5f - WARMTH;
  out(x, y, c) = mux(c, {v(x, y) * kr, 0.8f * v(x, y), (0.6f * v(x, y)) * kb, 1.0f});
  interleaved(out, vec);
  parallel_rows(out, 16);
  v.compute_at(out, x).vectorize(x, vec);
  return out;
}

/* P2: rings (materialised, 4 channels), then the direct 25-tap mean (no separable trick, as in
 * C), coordinates clamped to the edge. The clamp is folded into rings (rings at x = -1 is rings
 * at x = 0: Halide's repeat_edge, written into the producer), so the blur's 100 loads per
 * vector are plain dense loads. rings lives in a sliding window of rows per strip: each row of
 * blur computes one new row of rings (and 4 at the top of each strip), the ring value once per
 * vector of pixels. */
static Func p2(int vec) {
  Func v("v"), rings("rings"), blur("p2");
  v(x, y) = ring_value(clamp(x, 0, W - 1), clamp(y, 0, H - 1));
  rings(x, y, c) = mux(c, {v(x, y), 0.8f * v(x, y), 0.6f * v(x, y), 1.0f});
  Expr s = 0.0f;
  for (int dy = -2; dy <= 2; dy++)
    for (int dx = -2; dx <= 2; dx++) s = s + rings(x + dx, y + dy, c);
  blur(x, y, c) = s * (1.0f / 25.0f);
  interleaved(blur, vec);
  parallel_rows(blur, 64);
  rings.store_at(blur, yo).compute_at(blur, yi).reorder(c, x, y).unroll(c).vectorize(x, vec);
  v.compute_at(rings, x).vectorize(x, vec);
  return blur;
}

/* P3: one Life step of `cells`, wrap-around at the edges (repeat_image: the loop is partitioned,
 * so the interior loads are plain vectors and only the edge columns/rows wrap). */
static Func p3_step(ImageParam cells, int vec) {
  Func wrapped = BoundaryConditions::repeat_image(cells);
  Func next("p3");
  Expr n = wrapped(x - 1, y - 1) + wrapped(x, y - 1) + wrapped(x + 1, y - 1) + wrapped(x - 1, y) + wrapped(x + 1, y) +
           wrapped(x - 1, y + 1) + wrapped(x, y + 1) + wrapped(x + 1, y + 1);
  Expr cell = cells(x, y);
  next(x, y) = select(n == 3.0f || (cell == 1.0f && n == 2.0f), 1.0f, 0.0f);
  next.vectorize(x, vec);
  parallel_rows(next, 16);
  return next;
}

/* P4: z = z*z + c while |z|^2 <= 4, at most 256 times. Halide has no data-dependent loop, so
 * the update runs all 256 iterations and an escaped pixel freezes (stops changing and counting),
 * which is the C reference's lane rule without its early exit of a block. Four vectors of
 * pixels in flight per block of x, iterations outside them. */
static Func p4(int vec) {
  Func z("z"), out("p4");
  Expr cx = -2.0f + 3.0f * (cast<float>(x) + 0.5f) / cast<float>(W);
  Expr cy = -1.5f + 3.0f * (cast<float>(y) + 0.5f) / cast<float>(H);
  z(x, y) = Tuple(0.0f, 0.0f, 0.0f); /* zr, zi, count */
  RDom it(0, P4_MAX_ITER, "it");
  Expr zr = z(x, y)[0], zi = z(x, y)[1], cnt = z(x, y)[2];
  Expr r2 = zr * zr, i2 = zi * zi;
  Expr in = r2 + i2 <= 4.0f;
  z(x, y) = Tuple(select(in, r2 - i2 + cx, zr), select(in, 2.0f * zr * zi + cy, zi), select(in, cast<float>(it + 1), cnt));
  Expr v = z(x, y)[2] / (float)P4_MAX_ITER;
  out(x, y, c) = mux(c, {v, v * v, sqrt(v), 1.0f});
  out.bound(c, 0, 4).reorder(c, x, y).unroll(c);
  out.output_buffer().dim(0).set_stride(4).dim(2).set_stride(1);
  out.split(x, xo, xi, 4 * vec, TailStrategy::GuardWithIf).vectorize(xi, vec).unroll(xi);
  parallel_rows(out, 8);
  z.compute_at(out, xo).vectorize(x, vec).unroll(x);
  z.update().reorder(x, it).vectorize(x, vec).unroll(x);
  return out;
}

/* P3's initial pattern, the C reference's life_init(). */
static void life_init(Buffer<float> &cells) {
  for (int yy = 0; yy < cells.height(); yy++)
    for (int xx = 0; xx < cells.width(); xx++) {
      uint32_t h = (((uint32_t)xx * 73856093u) ^ ((uint32_t)yy * 19349663u)) & 0x7fffffffu;
      cells(xx, yy) = h % 3u == 0u ? 1.0f : 0.0f;
    }
}

static int usage() {
  fprintf(stderr, "usage: pipelines-halide P1|P2|P3|P4 WIDTH HEIGHT RUNS THREADS [--steps N] [--fast-sin]\n");
  return 2;
}

static bool parse_pos(const char *s, long max, long *out) {
  char *end;
  long v = strtol(s, &end, 10);
  if (*s == '\0' || *end != '\0' || v < 0 || v > max) return false;
  *out = v;
  return true;
}

int main(int argc, char **argv) {
  if (argc < 6) return usage();
  const std::string name = argv[1];
  if (name != "P1" && name != "P2" && name != "P3" && name != "P4") return usage();
  const int pl = name[1] - '0';
  long w, h, runs, threads, steps = 10;
  if (!parse_pos(argv[2], 1L << 20, &w) || w < 1 || !parse_pos(argv[3], 1L << 20, &h) || h < 1 ||
      !parse_pos(argv[4], 100000, &runs) || runs < 1 || !parse_pos(argv[5], 4096, &threads) || threads < 1)
    return usage();
  for (int a = 6; a < argc; a++) {
    if (strcmp(argv[a], "--steps") == 0 && a + 1 < argc) {
      if (!parse_pos(argv[++a], 1000000, &steps)) return usage();
    } else if (strcmp(argv[a], "--fast-sin") == 0) {
      use_fast_sin = true;
    } else {
      return usage();
    }
  }
  if (pl != 3) steps = 1;
  /* read by the runtime when its thread pool starts, i.e. at the first parallel run */
  setenv("HL_NUM_THREADS", std::to_string(threads).c_str(), 1);

  const Target target = get_jit_target_from_environment();
  int vec = target.natural_vector_size<float>(); /* 16 floats with AVX-512 */
  while (vec > 4 && vec > w) vec /= 2;                /* a vector's last lanes shift inwards: one fits */
  W.set((int)w);
  H.set((int)h);

  ImageParam cells(Float(32), 2, "cells");
  Func f = pl == 1 ? p1(vec) : pl == 2 ? p2(vec) : pl == 3 ? p3_step(cells, vec) : p4(vec);
  double t0 = now_ms();
  f.compile_jit(target);
  const double compile_ms = now_ms() - t0;

  Buffer<float> out = pl == 3 ? Buffer<float>((int)w, (int)h) : Buffer<float>::make_interleaved((int)w, (int)h, 4);
  Buffer<float> tmp, init;
  if (pl == 3) {
    tmp = Buffer<float>((int)w, (int)h);
    init = Buffer<float>((int)w, (int)h);
    life_init(init);
  }

  std::vector<double> times;
  Buffer<float> result = out;
  for (long r = -1; r < runs; r++) { /* r = -1: warm-up */
    if (pl == 3) out.copy_from(init); /* outside the timed region */
    t0 = now_ms();
    if (pl == 3) {
      Buffer<float> s = out, d = tmp;
      for (long k = 0; k < steps; k++) {
        cells.set(s);
        f.realize(d);
        std::swap(s, d);
      }
      result = s;
    } else {
      f.realize(out);
    }
    const double t1 = now_ms();
    if (r >= 0) times.push_back(t1 - t0);
  }

  /* checksum in index order: P1/P2/P4 interleaved rgba, 4 * (y * W + x) + c, like the others */
  const size_t n = (size_t)w * (size_t)h * (pl == 3 ? 1 : 4);
  double sum = 0.0;
  for (size_t i = 0; i < n; i++) sum += (double)result.data()[i];

  std::vector<double> sorted = times;
  std::sort(sorted.begin(), sorted.end());
  const double med = runs % 2 ? sorted[runs / 2] : 0.5 * (sorted[runs / 2 - 1] + sorted[runs / 2]);
  const double pixels = (double)w * (double)h * (pl == 3 ? (double)steps : 1.0);
  const double mpix = med > 0.0 ? pixels / (med / 1000.0) / 1e6 : 0.0;

  printf("{\"pipeline\":\"%s\",\"width\":%ld,\"height\":%ld,\"system\":\"halide\",\"workers\":%ld,\"runs\":[", name.c_str(), w, h, threads);
  for (size_t r = 0; r < times.size(); r++) printf(r ? ",%.4f" : "%.4f", times[r]);
  printf("],\"median_ms\":%.4f,\"mpix_s\":%.3f,\"checksum\":%.17g,\"compile_ms\":%.1f", med, mpix, sum, compile_ms);
  if (pl == 3 && steps != 10) printf(",\"steps\":%ld", steps);
  printf(",\"note\":\"Halide 14 JIT, %s%s\"}\n", target.to_string().c_str(), use_fast_sin && pl <= 2 ? ", fast_sin" : "");
  return 0;
}
