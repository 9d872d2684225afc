#include "rk_select.h"

void rk_topk_sort(rk_topk *h)
{
    /* heapsort: repeatedly move the worst entry (the root) to the end */
    int32_t n = h->n;
    while (h->n > 1) {
        int32_t last = h->n - 1;
        double s = h->score[0];
        int32_t id = h->idx[0];
        h->score[0] = h->score[last];
        h->idx[0] = h->idx[last];
        h->n = last;
        rk_topk_sift_down_(h, 0);
        h->score[last] = s;
        h->idx[last] = id;
    }
    h->n = n;
}
