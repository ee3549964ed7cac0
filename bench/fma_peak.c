/* The float32 FMA peak of one core: 12 independent chains of 256-bit FMAs (two FMA pipes of
 * latency 4 need at least 8 in flight). bench/bench_convs.py builds and runs it to report
 * convolutions as a share of this peak. Prints GFLOP/s measured over the thread's CPU time,
 * so time the machine gives to other processes is not counted. */
#include <immintrin.h>
#include <stdio.h>
#include <time.h>

int main(void) {
  __m256 a[12];
  for (int i = 0; i < 12; i++) a[i] = _mm256_set1_ps(i * 0.001f);
  const __m256 b = _mm256_set1_ps(0.9999f), c = _mm256_set1_ps(0.0001f);
  const long n = 50000000;
  struct timespec t0, t1;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
  for (long k = 0; k < n; k++) {
#pragma GCC unroll 12
    for (int i = 0; i < 12; i++) a[i] = _mm256_fmadd_ps(a[i], b, c);
    __asm__ volatile("" : "+x"(a[0]), "+x"(a[1]), "+x"(a[2]), "+x"(a[3]), "+x"(a[4]), "+x"(a[5]),
                     "+x"(a[6]), "+x"(a[7]), "+x"(a[8]), "+x"(a[9]), "+x"(a[10]), "+x"(a[11]));
  }
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
  const double s = (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec);
  float sink = 0;
  for (int i = 0; i < 12; i++) sink += a[i][0];
  printf("%.2f %g\n", n * 12.0 * 16.0 / s / 1e9, sink);
  return 0;
}
