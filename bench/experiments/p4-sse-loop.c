// P4's inner loop as the engine compiles it (4-lane f32 vectors, K of them per step, alive mask
// and per-lane count, one any-lane exit test per repetition), written in C with SSE intrinsics.
// It measures what this machine does with that loop when no register is spilled: build with
// AVX-512VL so that gcc has 32 vector registers, and compare ns per vector-repetition with the
// engine's (bench/RESULTS.md, "Why P4 stays short").
//
//   for K in 1 2 4 8; do gcc -O3 -mavx512f -mavx512vl -ffp-contract=off -DK=$K bench/experiments/p4-sse-loop.c \
//     -o /tmp/p4-loop && /tmp/p4-loop; done
#include <immintrin.h>
#include <stdio.h>
#include <time.h>

#ifndef K
#define K 4
#endif
#define W 2048
#define H 2048

static float out[W * H];

int main(void) {
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  long reps = 0;
  for (int y = 0; y < H; y++) {
    __m128 cy = _mm_set1_ps(-1.5f + 3.0f * ((float)y + 0.5f) / H);
    for (int x = 0; x + 4 * K <= W; x += 4 * K) {
      __m128 cx[K], zr[K], zi[K], alive[K];
      __m128i count[K];
      for (int k = 0; k < K; k++) {
        __m128 xs = _mm_setr_ps(x + 4 * k, x + 4 * k + 1, x + 4 * k + 2, x + 4 * k + 3);
        cx[k] = _mm_add_ps(_mm_set1_ps(-2.0f), _mm_div_ps(_mm_mul_ps(_mm_set1_ps(3.0f), _mm_add_ps(xs, _mm_set1_ps(0.5f))), _mm_set1_ps(W)));
        zr[k] = zi[k] = _mm_setzero_ps();
        alive[k] = _mm_castsi128_ps(_mm_set1_epi32(-1));
        count[k] = _mm_setzero_si128();
      }
      const __m128 four = _mm_set1_ps(4.0f);
      for (int i = 0; i < 256; i++) {
        __m128 any = _mm_setzero_ps();
#pragma GCC unroll 16
        for (int k = 0; k < K; k++) {
          __m128 r2 = _mm_mul_ps(zr[k], zr[k]), i2 = _mm_mul_ps(zi[k], zi[k]);
          alive[k] = _mm_and_ps(alive[k], _mm_cmple_ps(_mm_add_ps(r2, i2), four));
          zi[k] = _mm_add_ps(_mm_mul_ps(_mm_add_ps(zr[k], zr[k]), zi[k]), cy);
          zr[k] = _mm_add_ps(_mm_sub_ps(r2, i2), cx[k]);
          count[k] = _mm_sub_epi32(count[k], _mm_castps_si128(alive[k]));
          any = _mm_or_ps(any, alive[k]);
        }
        reps++;
        if (_mm_testz_si128(_mm_castps_si128(any), _mm_castps_si128(any))) break;
      }
      for (int k = 0; k < K; k++) _mm_storeu_ps(out + y * W + x + 4 * k, _mm_cvtepi32_ps(count[k]));
    }
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double s = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9;
  double sum = 0;
  for (int i = 0; i < W * H; i++) sum += out[i];
  printf("K=%d: %.1f ms, %ld repetitions, %.2f ns per vector-repetition (checksum %.0f)\n", K, s * 1e3, reps, s * 1e9 / reps / K, sum);
  return 0;
}
