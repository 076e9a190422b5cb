/* clEnqueueNDRangeKernel in 1, 2 and 3 dimensions, with and without a local
 * size, with a global work offset. The kernel writes, for every work-item,
 * its global id (offset included) and its local and group ids, and the host
 * checks each against what the NDRange must produce. */
#include "common.h"

static const char *src =
    "__kernel void ids(__global int *gid, __global int *lid) {\n"
    "    uint d = get_work_dim();\n"
    "    size_t x = get_global_id(0) - get_global_offset(0);\n"
    "    size_t y = d > 1 ? get_global_id(1) - get_global_offset(1) : 0;\n"
    "    size_t z = d > 2 ? get_global_id(2) - get_global_offset(2) : 0;\n"
    "    size_t i = (z * get_global_size(1) + y) * get_global_size(0) + x;\n"
    "    gid[i] = (int)(get_global_id(0) + 1000 * get_global_id(1) + 1000000 * get_global_id(2));\n"
    "    lid[i] = (int)(get_local_id(0) + 10 * get_local_id(1) + 100 * get_local_id(2)\n"
    "                   + 1000 * (get_group_id(0) + 10 * get_group_id(1) + 100 * get_group_id(2)));\n"
    "    if (get_local_size(0) * get_num_groups(0) != get_global_size(0)) lid[i] = -1;\n"
    "}\n";

struct shape {
    cl_uint dim;
    size_t off[3], gws[3], lws[3];
    bool has_off, has_lws;
};

int main(int argc, char **argv)
{
    struct conf c;
    conf_open(argc, argv, &c);
    size_t max_wg = 0, max_items[3] = {0};
    CL(clGetDeviceInfo(c.device, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof max_wg, &max_wg, NULL));
    CL(clGetDeviceInfo(c.device, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof max_items, max_items, NULL));
    if (max_wg < 16 || max_items[0] < 16 || max_items[1] < 4 || max_items[2] < 2)
        conf_skip("work-group limits too small (%zu; %zu x %zu x %zu)", max_wg, max_items[0],
                  max_items[1], max_items[2]);
    cl_program p = conf_build(&c, src);
    cl_kernel k = conf_kernel(p, "ids");
    static const struct shape shapes[] = {
        {1, {0}, {64, 1, 1}, {0}, false, false},
        {1, {0}, {64, 1, 1}, {16, 1, 1}, false, true},
        {1, {5}, {64, 1, 1}, {0}, true, false},
        {1, {8}, {64, 1, 1}, {16, 1, 1}, true, true},
        {2, {0}, {16, 8, 1}, {0}, false, false},
        {2, {0}, {16, 8, 1}, {4, 4, 1}, false, true},
        {2, {3, 7}, {16, 8, 1}, {0}, true, false},
        {2, {2, 1}, {16, 8, 1}, {8, 2, 1}, true, true},
        {3, {0}, {8, 4, 4}, {0}, false, false},
        {3, {0}, {8, 4, 4}, {2, 2, 2}, false, true},
        {3, {1, 2, 3}, {8, 4, 4}, {0}, true, false},
        {3, {4, 0, 9}, {8, 4, 4}, {4, 2, 2}, true, true},
    };
    enum { MAXN = 128 };
    cl_mem gid = conf_buffer(c.ctx, MAXN * sizeof(int), NULL), lid = conf_buffer(c.ctx, MAXN * sizeof(int), NULL);
    conf_arg_mem(k, 0, gid);
    conf_arg_mem(k, 1, lid);
    bool all = true;
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
        const struct shape *sh = &shapes[s];
        size_t n = sh->gws[0] * sh->gws[1] * sh->gws[2];
        int fill = -7;
        CL(clEnqueueFillBuffer(c.queue, gid, &fill, sizeof fill, 0, MAXN * sizeof(int), 0, NULL, NULL));
        CL(clEnqueueFillBuffer(c.queue, lid, &fill, sizeof fill, 0, MAXN * sizeof(int), 0, NULL, NULL));
        conf_ndrange(c.queue, k, "ids", sh->dim, sh->has_off ? sh->off : NULL, sh->gws,
                     sh->has_lws ? sh->lws : NULL, 0, NULL, NULL);
        int want_g[MAXN], want_l[MAXN];
        for (size_t z = 0; z < sh->gws[2]; z++)
            for (size_t y = 0; y < sh->gws[1]; y++)
                for (size_t x = 0; x < sh->gws[0]; x++) {
                    size_t i = (z * sh->gws[1] + y) * sh->gws[0] + x;
                    size_t o[3] = {sh->has_off ? sh->off[0] : 0, sh->dim > 1 && sh->has_off ? sh->off[1] : 0,
                                   sh->dim > 2 && sh->has_off ? sh->off[2] : 0};
                    want_g[i] = (int)((x + o[0]) + 1000 * (y + o[1]) + 1000000 * (z + o[2]));
                    if (sh->has_lws) {
                        size_t l[3] = {sh->lws[0], sh->lws[1], sh->lws[2]};
                        want_l[i] = (int)(x % l[0] + 10 * (y % l[1]) + 100 * (z % l[2]) +
                                          1000 * (x / l[0] + 10 * (y / l[1]) + 100 * (z / l[2])));
                    }
                }
        char what[64];
        snprintf(what, sizeof what, "%uD%s%s", sh->dim, sh->has_lws ? " local" : "", sh->has_off ? " offset" : "");
        bool ok = conf_read_check(c.queue, gid, want_g, n, what);
        if (sh->has_lws)
            ok = conf_read_check(c.queue, lid, want_l, n, what) && ok;
        else { /* the implementation picks the local size: ids must still be consistent */
            int *got = malloc(n * sizeof *got);
            CL(clEnqueueReadBuffer(c.queue, lid, CL_TRUE, 0, n * sizeof *got, got, 0, NULL, NULL));
            for (size_t i = 0; i < n; i++)
                ok = ok && got[i] >= 0;
            free(got);
        }
        CHECK(ok, "%uD, global %zux%zux%zu%s%s", sh->dim, sh->gws[0], sh->gws[1], sh->gws[2],
              sh->has_lws ? ", local size" : ", no local size", sh->has_off ? ", offset" : "");
        all = all && ok;
    }
    conf_release("mmkp", gid, lid, k, p);
    conf_close(&c);
    return conf_finish(all);
}
