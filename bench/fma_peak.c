/* The float32 FMA peak of one core: 12 independent chains of 256-bit FMAs (two FMA pipes of
 * latency 4 need at least 8 in flight), written in assembly so that nothing but the FMAs and
 * the loop counter runs. bench/bench_convs.py builds and runs it to report convolutions as a
 * share of this peak. Prints GFLOP/s over the thread's CPU time, so that time the machine
 * gives to other processes is not counted. x86-64 with AVX2 + FMA only. */
#include <stdio.h>
#include <time.h>

int main(void) {
  const long n = 100000000;
  struct timespec t0, t1;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
  __asm__ volatile(
      "vxorps %%ymm0, %%ymm0, %%ymm0\n"
      "vxorps %%ymm1, %%ymm1, %%ymm1\n"
      "vxorps %%ymm2, %%ymm2, %%ymm2\n"
      "vxorps %%ymm3, %%ymm3, %%ymm3\n"
      "vxorps %%ymm4, %%ymm4, %%ymm4\n"
      "vxorps %%ymm5, %%ymm5, %%ymm5\n"
      "vxorps %%ymm6, %%ymm6, %%ymm6\n"
      "vxorps %%ymm7, %%ymm7, %%ymm7\n"
      "vxorps %%ymm8, %%ymm8, %%ymm8\n"
      "vxorps %%ymm9, %%ymm9, %%ymm9\n"
      "vxorps %%ymm10, %%ymm10, %%ymm10\n"
      "vxorps %%ymm11, %%ymm11, %%ymm11\n"
      "vxorps %%ymm12, %%ymm12, %%ymm12\n"
      "vxorps %%ymm13, %%ymm13, %%ymm13\n"
      "mov %0, %%rcx\n"
      "1:\n"
      "vfmadd231ps %%ymm12, %%ymm13, %%ymm0\n"
      "vfmadd231ps %%ymm12, %%ymm13, %%ymm1\n"
      "vfmadd231ps %%ymm12, %%ymm13, %%ymm2\n"
      "vfmadd231ps %%ymm12, %%ymm13, %%ymm3\n"
      "vfmadd231ps %%ymm12, %%ymm13, %%ymm4\n"
      "vfmadd231ps %%ymm12, %%ymm13, %%ymm5\n"
      "vfmadd231ps %%ymm12, %%ymm13, %%ymm6\n"
      "vfmadd231ps %%ymm12, %%ymm13, %%ymm7\n"
      "vfmadd231ps %%ymm12, %%ymm13, %%ymm8\n"
      "vfmadd231ps %%ymm12, %%ymm13, %%ymm9\n"
      "vfmadd231ps %%ymm12, %%ymm13, %%ymm10\n"
      "vfmadd231ps %%ymm12, %%ymm13, %%ymm11\n"
      "dec %%rcx\n"
      "jnz 1b\n"
      "vzeroupper\n"
      :
      : "r"(n)
      : "rcx", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9",
        "xmm10", "xmm11", "xmm12", "xmm13", "cc");
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
  const double s = (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec);
  printf("%.2f\n", n * 12.0 * 16.0 / s / 1e9);
  return 0;
}
