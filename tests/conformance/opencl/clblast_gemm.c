/* A library program: CLBlast's SGEMM called from C, on small integers so
 * that every sum is exact in float and the result can be compared element
 * for element with the host's, and bit for bit between runs (a digest of C
 * is printed). CLBlast decides which kernels to launch, so only a lower
 * bound on launches is known: one per call. */
#include "common.h"

#include <clblast_c.h>
#include <stdint.h>

enum { M = 96, K = 128, NN = 80, CALLS = 10 };

int main(int argc, char **argv)
{
    struct conf c;
    conf_open(argc, argv, &c);
    static float a[M * K], b[K * NN], cm[M * NN], want[M * NN];
    for (int i = 0; i < M * K; i++)
        a[i] = (float)((i * 7) % 7 - 3);
    for (int i = 0; i < K * NN; i++)
        b[i] = (float)((i * 5) % 5 - 2);
    cl_mem da = conf_buffer(c.ctx, sizeof a, a), db = conf_buffer(c.ctx, sizeof b, b),
           dc = conf_buffer(c.ctx, sizeof cm, cm);
    for (int call = 0; call < CALLS; call++) {
        cl_event ev = NULL;
        CLBlastStatusCode s = CLBlastSgemm(CLBlastLayoutRowMajor, CLBlastTransposeNo, CLBlastTransposeNo, M, NN, K,
                                           1.0f, da, 0, K, db, 0, NN, 1.0f, dc, 0, NN, &c.queue, &ev);
        if (s != CLBlastSuccess) {
            fprintf(stderr, "CLBlastSgemm: status %d\n", s);
            return 1;
        }
        CL(clWaitForEvents(1, &ev));
        CL(clReleaseEvent(ev));
    }
    CL(clEnqueueReadBuffer(c.queue, dc, CL_TRUE, 0, sizeof cm, cm, 0, NULL, NULL));
    for (int i = 0; i < M; i++)
        for (int j = 0; j < NN; j++) {
            float s = 0;
            for (int k = 0; k < K; k++)
                s += a[i * K + k] * b[k * NN + j];
            want[i * NN + j] = s * CALLS;
        }
    bool ok = true;
    uint64_t digest = 1469598103934665603ull;
    for (int i = 0; i < M * NN; i++) {
        if (cm[i] != want[i] && ok) {
            fprintf(stderr, "element %d is %g, expected %g\n", i, cm[i], want[i]);
            ok = false;
        }
        uint32_t bits;
        memcpy(&bits, &cm[i], sizeof bits);
        digest = (digest ^ bits) * 1099511628211ull;
    }
    CHECK(ok, "%d SGEMMs %dx%dx%d accumulated exactly", CALLS, M, NN, K);
    printf("digest %016llx\n", (unsigned long long)digest);
    conf_release("mmm", da, db, dc);
    conf_close(&c);
    printf("launches-at-least %d\n", CALLS);
    ok = ok && conf_failures == 0;
    printf("%s\n", ok ? "result ok" : "result WRONG");
    return ok ? 0 : 1;
}
