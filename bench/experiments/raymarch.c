// Experiment (issue 17): the ceiling for the ray marcher's frame. bench/corpus/raymarch.esn written
// in C: the same 64^3 density field (the same hash noise), the same 256x256 image, the same f32
// operations in the same order (no -ffast-math: GCC may not reassociate or contract them, hence
// -ffp-contract=off), rows spread over OpenMP threads. The camera's sin/cos are libm's (once per
// frame). Prints per frame the wall time of the frame (the density field is made once, as the
// engine keeps it across frames) and a checksum of the image.
//
//   gcc -O3 -march=native -ffp-contract=off -fopenmp bench/experiments/raymarch.c -o /tmp/raymarch -lm
//   OMP_NUM_THREADS=2 /tmp/raymarch FRAMES dynamic|static [scalar|sse]
//
// scalar: one ray at a time (GCC cannot vectorise the data-dependent while); sse: 4 rays a step.

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <omp.h>
#include <immintrin.h>

#define N 64
#define W 256
#define H 256

static float density[N * N * N];
static float image[W * H * 4];

static float hash3(int32_t x, int32_t y, int32_t z) {
  uint32_t h = 0x9e3779b9u;
  const uint32_t primes[3] = {0x27d4eb2du, 0x165667b1u, 0x1b873593u};
  int32_t c[3] = {x, y, z};
  for (int i = 0; i < 3; i++) {
    h ^= (uint32_t)c[i] * primes[i];
    h = (h ^ (h >> 15)) * 0x2c1b3c6du;
    h = (h ^ (h >> 12)) * 0x297a2d39u;
    h ^= h >> 15;
  }
  return (float)(h >> 8) * (1.0f / 16777216.0f);
}

static float noise3(float px, float py, float pz) {
  float p[3] = {px, py, pz}, t[3];
  int32_t b[3];
  for (int i = 0; i < 3; i++) {
    float cell = floorf(p[i]);
    float f = p[i] - cell;
    t[i] = f * f * (3.0f - 2.0f * f);
    b[i] = (int32_t)cell;
  }
  float c[8];
  for (int bits = 0; bits < 8; bits++) c[bits] = hash3(b[0] + (bits & 1), b[1] + ((bits >> 1) & 1), b[2] + ((bits >> 2) & 1));
  float x[4], y[2];
  for (int i = 0; i < 4; i++) x[i] = c[2 * i] + (c[2 * i + 1] - c[2 * i]) * t[0];
  for (int i = 0; i < 2; i++) y[i] = x[2 * i] + (x[2 * i + 1] - x[2 * i]) * t[1];
  return y[0] + (y[1] - y[0]) * t[2];
}

static void make_density(void) {
  for (int z = 0; z < N; z++)
    for (int y = 0; y < N; y++)
      for (int x = 0; x < N; x++) {
        float px = (float)x / 64.0f - 0.5f, py = (float)y / 64.0f - 0.5f, pz = (float)z / 64.0f - 0.5f;
        float r = sqrtf(px * px + py * py + pz * pz);
        float d = 0.4f - r + 0.08f * noise3((float)x * 0.15f, (float)y * 0.15f, (float)z * 0.15f);
        density[(z * N + y) * N + x] = fminf(fmaxf(d, 0.0f), 1.0f);
      }
}

static inline int clampi(int i) { return i < 0 ? 0 : i > N - 1 ? N - 1 : i; }

// The trilinear sample of the lowering (src/ir/lower/expression.ts): p = c * n - 0.5, base =
// floor(p), weights p - base, corners clamped, blended along x, then y, then z.
static inline float sample(float u, float v, float w) {
  float c[3] = {u, v, w}, fr[3];
  int b[3];
  for (int i = 0; i < 3; i++) {
    float p = c[i] * (float)N - 0.5f;
    float fl = floorf(p);
    // truncSat: the lowering's f32 -> i32 saturates (a ray far outside the cube).
    b[i] = fl >= 2147483648.0f ? INT32_MAX : fl < -2147483648.0f ? INT32_MIN : (int)fl;
    fr[i] = p - fl;
  }
  int x0 = clampi(b[0]), x1 = clampi(b[0] + 1), y0 = clampi(b[1]), y1 = clampi(b[1] + 1), z0 = clampi(b[2]), z1 = clampi(b[2] + 1);
  const float *r00 = density + (z0 * N + y0) * N, *r10 = density + (z0 * N + y1) * N;
  const float *r01 = density + (z1 * N + y0) * N, *r11 = density + (z1 * N + y1) * N;
  float a00 = r00[x0] + (r00[x1] - r00[x0]) * fr[0];
  float a10 = r10[x0] + (r10[x1] - r10[x0]) * fr[0];
  float a01 = r01[x0] + (r01[x1] - r01[x0]) * fr[0];
  float a11 = r11[x0] + (r11[x1] - r11[x0]) * fr[0];
  float b0 = a00 + (a10 - a00) * fr[1];
  float b1 = a01 + (a11 - a01) * fr[1];
  return b0 + (b1 - b0) * fr[2];
}

static void normalize3(float v[3]) {
  float inv = 1.0f / sqrtf(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
  for (int i = 0; i < 3; i++) v[i] *= inv;
}

/* The frame's camera and light direction: the kernel's per-pixel set-up that depends on time only. */
struct camera { float eye[3], fwd[3], right[3], up[3], ld[3]; };

static struct camera camera_at(float time) {
  struct camera c = {
    .eye = {0.5f + 0.9f * cosf(time * 0.3f), 0.5f + 0.9f * sinf(time * 0.3f), 0.5f},
    .ld = {-0.4f, -0.3f, 0.8f},
  };
  for (int i = 0; i < 3; i++) c.fwd[i] = 0.5f - c.eye[i];
  normalize3(c.fwd);
  c.right[0] = c.fwd[1] * 1.0f - c.fwd[2] * 0.0f;
  c.right[1] = c.fwd[2] * 0.0f - c.fwd[0] * 1.0f;
  c.right[2] = c.fwd[0] * 0.0f - c.fwd[1] * 0.0f;
  normalize3(c.right);
  c.up[0] = c.right[1] * c.fwd[2] - c.right[2] * c.fwd[1];
  c.up[1] = c.right[2] * c.fwd[0] - c.right[0] * c.fwd[2];
  c.up[2] = c.right[0] * c.fwd[1] - c.right[1] * c.fwd[0];
  normalize3(c.ld);
  return c;
}

static void frame(float time, int dynamic) {
  const struct camera cam = camera_at(time);
  const float *eye = cam.eye, *fwd = cam.fwd, *right = cam.right, *up = cam.up, *ld = cam.ld;
  const float e = 1.0f / 64.0f;
#pragma omp parallel for schedule(runtime)
  for (int y = 0; y < H; y++) {
    for (int x = 0; x < W; x++) {
      float u = ((float)x + 0.5f) / (float)W * 2.0f - 1.0f;
      float v = ((float)y + 0.5f) / (float)H * 2.0f - 1.0f;
      float dir[3];
      for (int i = 0; i < 3; i++) dir[i] = fwd[i] + right[i] * u * 0.6f + up[i] * v * 0.6f;
      normalize3(dir);
      float t = 0.2f, acc[3] = {0, 0, 0}, alpha = 0.0f;
      while (t < 2.0f && alpha < 0.97f) {
        float p[3] = {eye[0] + dir[0] * t, eye[1] + dir[1] * t, eye[2] + dir[2] * t};
        float d = sample(p[0], p[1], p[2]);
        if (d > 0.01f) {
          float gx = sample(p[0] + e, p[1], p[2]) - sample(p[0] - e, p[1], p[2]);
          float gy = sample(p[0], p[1] + e, p[2]) - sample(p[0], p[1] - e, p[2]);
          float gz = sample(p[0], p[1], p[2] + e) - sample(p[0], p[1], p[2] - e);
          float n[3] = {gx, gy, gz + 0.0001f};
          normalize3(n);
          float light = 0.3f + 0.7f * fmaxf(n[0] * ld[0] + n[1] * ld[1] + n[2] * ld[2], 0.0f);
          float a = d * 0.3f * (1.0f - alpha);
          acc[0] += 0.9f * light * a;
          acc[1] += 0.7f * light * a;
          acc[2] += 0.5f * light * a;
          alpha += a;
        }
        t += 0.02f;
      }
      float *o = image + (y * W + x) * 4;
      o[0] = acc[0] + 0.1f * (1.0f - alpha);
      o[1] = acc[1] + 0.12f * (1.0f - alpha);
      o[2] = acc[2] + 0.18f * (1.0f - alpha);
      o[3] = 1.0f;
    }
  }
  (void)dynamic;
}

// The same frame, 4 rays at a time in SSE lanes (the engine's width): one sample of 4 lanes is the
// index arithmetic in vectors and 8 gathers; the loop runs while any lane's ray goes on, a lane
// that stopped keeps its values (a mask), as the engine runs a data-dependent while.
static inline __m128 sample4(__m128 u, __m128 v, __m128 w) {
  __m128 c[3] = {u, v, w}, fr[3];
  __m128i lo[3], hi[3];
  const __m128i zero = _mm_setzero_si128(), last = _mm_set1_epi32(N - 1), one = _mm_set1_epi32(1);
  for (int i = 0; i < 3; i++) {
    __m128 p = _mm_sub_ps(_mm_mul_ps(c[i], _mm_set1_ps((float)N)), _mm_set1_ps(0.5f));
    __m128 fl = _mm_floor_ps(p);
    __m128i b = _mm_cvttps_epi32(fl); // rays stay within +-2^31 (t < 2): no saturation needed
    fr[i] = _mm_sub_ps(p, fl);
    lo[i] = _mm_min_epi32(_mm_max_epi32(b, zero), last);
    hi[i] = _mm_min_epi32(_mm_max_epi32(_mm_add_epi32(b, one), zero), last);
  }
  __m128i row[4];
  for (int r = 0; r < 4; r++) {
    __m128i z = (r & 2) ? hi[2] : lo[2], y = (r & 1) ? hi[1] : lo[1];
    row[r] = _mm_slli_epi32(_mm_add_epi32(_mm_slli_epi32(z, 6), y), 6);
  }
  __m128 a[4];
  for (int r = 0; r < 4; r++) {
    __m128 x0 = _mm_i32gather_ps(density, _mm_add_epi32(row[r], lo[0]), 4);
    __m128 x1 = _mm_i32gather_ps(density, _mm_add_epi32(row[r], hi[0]), 4);
    a[r] = _mm_add_ps(x0, _mm_mul_ps(_mm_sub_ps(x1, x0), fr[0]));
  }
  __m128 b0 = _mm_add_ps(a[0], _mm_mul_ps(_mm_sub_ps(a[1], a[0]), fr[1]));
  __m128 b1 = _mm_add_ps(a[2], _mm_mul_ps(_mm_sub_ps(a[3], a[2]), fr[1]));
  return _mm_add_ps(b0, _mm_mul_ps(_mm_sub_ps(b1, b0), fr[2]));
}

static inline __m128 normalize_inv(__m128 x, __m128 y, __m128 z) {
  return _mm_div_ps(_mm_set1_ps(1.0f), _mm_sqrt_ps(_mm_add_ps(_mm_add_ps(_mm_mul_ps(x, x), _mm_mul_ps(y, y)), _mm_mul_ps(z, z))));
}

static void frame4(float time) {
  const struct camera cam = camera_at(time);
  const float *eye = cam.eye, *fwd = cam.fwd, *right = cam.right, *up = cam.up, *ld = cam.ld;
  const __m128 e = _mm_set1_ps(1.0f / 64.0f);
#pragma omp parallel for schedule(runtime)
  for (int y = 0; y < H; y++) {
    for (int x = 0; x < W; x += 4) {
      __m128 u = _mm_sub_ps(_mm_mul_ps(_mm_div_ps(_mm_add_ps(_mm_setr_ps(x, x + 1, x + 2, x + 3), _mm_set1_ps(0.5f)), _mm_set1_ps((float)W)), _mm_set1_ps(2.0f)), _mm_set1_ps(1.0f));
      __m128 v = _mm_set1_ps(((float)y + 0.5f) / (float)H * 2.0f - 1.0f);
      __m128 dir[3];
      for (int i = 0; i < 3; i++)
        dir[i] = _mm_add_ps(_mm_add_ps(_mm_set1_ps(fwd[i]), _mm_mul_ps(_mm_mul_ps(_mm_set1_ps(right[i]), u), _mm_set1_ps(0.6f))),
                            _mm_mul_ps(_mm_mul_ps(_mm_set1_ps(up[i]), v), _mm_set1_ps(0.6f)));
      __m128 inv = normalize_inv(dir[0], dir[1], dir[2]);
      for (int i = 0; i < 3; i++) dir[i] = _mm_mul_ps(dir[i], inv);
      __m128 t = _mm_set1_ps(0.2f), alpha = _mm_setzero_ps(), acc[3] = {_mm_setzero_ps(), _mm_setzero_ps(), _mm_setzero_ps()};
      for (;;) {
        __m128 live = _mm_and_ps(_mm_cmplt_ps(t, _mm_set1_ps(2.0f)), _mm_cmplt_ps(alpha, _mm_set1_ps(0.97f)));
        if (!_mm_movemask_ps(live)) break;
        __m128 p[3];
        for (int i = 0; i < 3; i++) p[i] = _mm_add_ps(_mm_set1_ps(eye[i]), _mm_mul_ps(dir[i], t));
        __m128 d = sample4(p[0], p[1], p[2]);
        __m128 hit = _mm_and_ps(live, _mm_cmpgt_ps(d, _mm_set1_ps(0.01f)));
        if (_mm_movemask_ps(hit)) {
          __m128 gx = _mm_sub_ps(sample4(_mm_add_ps(p[0], e), p[1], p[2]), sample4(_mm_sub_ps(p[0], e), p[1], p[2]));
          __m128 gy = _mm_sub_ps(sample4(p[0], _mm_add_ps(p[1], e), p[2]), sample4(p[0], _mm_sub_ps(p[1], e), p[2]));
          __m128 gz = _mm_sub_ps(sample4(p[0], p[1], _mm_add_ps(p[2], e)), sample4(p[0], p[1], _mm_sub_ps(p[2], e)));
          gz = _mm_add_ps(gz, _mm_set1_ps(0.0001f));
          __m128 ni = normalize_inv(gx, gy, gz);
          __m128 dotn = _mm_add_ps(_mm_add_ps(_mm_mul_ps(_mm_mul_ps(gx, ni), _mm_set1_ps(ld[0])), _mm_mul_ps(_mm_mul_ps(gy, ni), _mm_set1_ps(ld[1]))),
                                   _mm_mul_ps(_mm_mul_ps(gz, ni), _mm_set1_ps(ld[2])));
          __m128 light = _mm_add_ps(_mm_set1_ps(0.3f), _mm_mul_ps(_mm_set1_ps(0.7f), _mm_max_ps(dotn, _mm_setzero_ps())));
          __m128 a = _mm_mul_ps(_mm_mul_ps(d, _mm_set1_ps(0.3f)), _mm_sub_ps(_mm_set1_ps(1.0f), alpha));
          const float tint[3] = {0.9f, 0.7f, 0.5f};
          for (int i = 0; i < 3; i++)
            acc[i] = _mm_blendv_ps(acc[i], _mm_add_ps(acc[i], _mm_mul_ps(_mm_mul_ps(_mm_set1_ps(tint[i]), light), a)), hit);
          alpha = _mm_blendv_ps(alpha, _mm_add_ps(alpha, a), hit);
        }
        t = _mm_blendv_ps(t, _mm_add_ps(t, _mm_set1_ps(0.02f)), live);
      }
      const float sky[3] = {0.1f, 0.12f, 0.18f};
      float out[3][4], al[4];
      __m128 rest = _mm_sub_ps(_mm_set1_ps(1.0f), alpha);
      for (int i = 0; i < 3; i++) _mm_storeu_ps(out[i], _mm_add_ps(acc[i], _mm_mul_ps(_mm_set1_ps(sky[i]), rest)));
      _mm_storeu_ps(al, alpha);
      for (int l = 0; l < 4; l++) {
        float *o = image + (y * W + x + l) * 4;
        o[0] = out[0][l], o[1] = out[1][l], o[2] = out[2][l], o[3] = 1.0f;
      }
    }
  }
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(int argc, char **argv) {
  int frames = argc > 1 ? atoi(argv[1]) : 20;
  int dynamic = argc > 2 && strcmp(argv[2], "static") != 0;
  int packets = argc > 3 && strcmp(argv[3], "sse") == 0;
  omp_set_schedule(dynamic ? omp_sched_dynamic : omp_sched_static, dynamic ? 4 : 0);
  make_density();
  for (int i = -1; i < frames; i++) {
    double t0 = now_ms();
    if (packets) frame4(0.5f);
    else frame(0.5f, dynamic);
    if (i < 0) continue;
    printf("%.3f\n", now_ms() - t0);
  }
  double sum = 0;
  for (int i = 0; i < W * H * 4; i++) sum += image[i];
  fprintf(stderr, "checksum %.6f threads %d\n", sum, omp_get_max_threads());
  return 0;
}
