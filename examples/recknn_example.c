/* recknn_example.c — librecknn from C: five users' ratings of six items in
 * arrays, a model (Pearson lists, top-N from the default ranking model, on
 * the GPU when one is usable), each user's top three, item 0's neighbours
 * and one prediction.  Build against an installed librecknn:
 *     cc recknn_example.c $(pkg-config --cflags --libs recknn) -o recknn_example
 */
#include <recknn.h>
#include <stdio.h>

#define CHECK(call)                                                                  \
    do {                                                                             \
        if ((call) != RK_OK) {                                                       \
            fprintf(stderr, "recknn_example: %s\n", err.msg);                        \
            return 1;                                                                \
        }                                                                            \
    } while (0)

int main(void)
{
    /* users 0..4, items 0..5, ratings 1..5 */
    static const int32_t users[] = {0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4};
    static const int32_t items[] = {0, 1, 2, 0, 1, 3, 4, 1, 2, 5, 0, 2, 3, 5, 3, 4, 5};
    static const float ratings[] = {5, 4, 1, 4, 5, 2, 1, 2, 5, 4, 5, 2, 4, 1, 3, 5, 4};
    const int64_t n = (int64_t)(sizeof users / sizeof users[0]);
    rk_error err;
    recknn_options *opt;
    recknn_data *data;
    recknn_model *model;
    CHECK(recknn_options_new(&opt, &err));
    CHECK(recknn_options_set(opt, "metric", "pearson", &err));
    CHECK(recknn_options_set(opt, "k", "3", &err));
    CHECK(recknn_data_new(5, 6, n, users, items, ratings, &data, &err));
    CHECK(recknn_fit(opt, data, &model, &err));
    printf("recknn %s\n", recknn_version());

    int32_t top[5 * 3], count[5];
    double score[5 * 3];
    CHECK(recknn_recommend(model, NULL, 0, 3, top, score, count, &err));
    for (int u = 0; u < 5; u++) {
        printf("user %d:", u);
        for (int r = 0; r < count[u]; r++) printf(" item %d (%.4f)", top[u * 3 + r], score[u * 3 + r]);
        printf("\n");
    }
    const int32_t item0 = 0;
    int32_t nbr[3], nn;
    float sim[3];
    CHECK(recknn_similar_items(model, &item0, 1, 3, nbr, sim, &nn, &err));
    printf("item 0's neighbours:");
    for (int r = 0; r < nn; r++) printf(" %d (%.4f)", nbr[r], (double)sim[r]);
    printf("\n");
    const int32_t pu = 2, pi = 0;
    double pred;
    CHECK(recknn_predict(model, &pu, &pi, 1, &pred, NULL, &err));
    printf("user 2, item 0: %.4f\n", pred);

    recknn_model_free(model);
    recknn_data_free(data);
    recknn_options_free(opt);
    return 0;
}
