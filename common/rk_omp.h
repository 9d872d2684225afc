/* rk_omp.h — OpenMP calls that also compile without OpenMP (one thread). */
#ifndef RK_OMP_H
#define RK_OMP_H

#ifdef _OPENMP
#include <omp.h>
static inline int rk_omp_max_threads(void) { return omp_get_max_threads(); }
static inline int rk_omp_thread_num(void) { return omp_get_thread_num(); }
static inline int rk_omp_num_threads(void) { return omp_get_num_threads(); }
static inline double rk_omp_wtime(void) { return omp_get_wtime(); }
static inline void rk_omp_set_threads(int n) { omp_set_num_threads(n); }
static inline int rk_omp_num_procs(void) { return omp_get_num_procs(); }
#else
#include <time.h>
static inline int rk_omp_max_threads(void) { return 1; }
static inline int rk_omp_thread_num(void) { return 0; }
static inline int rk_omp_num_threads(void) { return 1; }
static inline void rk_omp_set_threads(int n) { (void)n; }
static inline int rk_omp_num_procs(void) { return 1; }
static inline double rk_omp_wtime(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
#endif

#endif /* RK_OMP_H */
