#include "sim/workload.h"

#include "sim/fifo.h"
#include "core/file.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAGIC "fikit-sim-workload"
#define MAX_FILE_BYTES (512u << 20)
#define HOST_RULE "CPU time in microseconds, 0 to 10000000 (10 s), at most 3 decimals"
#define DUR_RULE "a duration in microseconds, more than 0 and at most 10000000 (10 s), at most 3 decimals"

/* ------------------------------------------------------------- helpers */

struct parser {
    const char *path;
    size_t line;
    struct fikit_err *err;
    struct fikit_sim_workload *w;
    size_t cap_steps, cap_seqs, cap_kernels;
    /* kernel name -> index: open addressing over the names, 0 = empty */
    uint32_t *slots;
    size_t nslots;
};

/* A value as it appears in a message: printable, bounded. */
static void shown(char *buf, size_t len, const char *s)
{
    size_t o = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p && o + 5 < len; p++) {
        if (*p < 0x20 || *p >= 0x7f)
            o += (size_t)snprintf(buf + o, len - o, "\\x%02x", *p);
        else
            buf[o++] = (char)*p;
        if (o > 60 && p[1]) {
            snprintf(buf + o, len - o, "...");
            return;
        }
    }
    buf[o] = '\0';
}

__attribute__((format(printf, 3, 4))) static int fail(struct parser *P, int code, const char *fmt,
                                                      ...)
{
    char what[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (P->line)
        return fikit_err_set(P->err, code, "%s:%zu: %s", P->path, P->line, what);
    return fikit_err_set(P->err, code, "%s: %s", P->path, what);
}

/* field 'value': rule */
static int bad_field(struct parser *P, const char *field, const char *value, const char *rule)
{
    char v[80];
    shown(v, sizeof v, value);
    return fail(P, -EINVAL, "%s '%s': %s", field, v, rule);
}

/* Microseconds with at most 3 decimals, exactly, into ns. */
static int parse_us(const char *s, uint64_t *ns)
{
    uint64_t whole = 0, frac = 0;
    int digits = 0, fd = 0;
    const char *p = s;
    for (; *p >= '0' && *p <= '9'; p++, digits++) {
        if (whole > 100000000000ull)
            return -ERANGE;
        whole = whole * 10 + (uint64_t)(*p - '0');
    }
    if (*p == '.') {
        p++;
        for (; *p >= '0' && *p <= '9'; p++, fd++) {
            if (fd == 3)
                return -EINVAL;
            frac = frac * 10 + (uint64_t)(*p - '0');
        }
        if (fd == 0)
            return -EINVAL;
    }
    if (*p || digits == 0)
        return -EINVAL;
    for (int i = fd; i < 3; i++)
        frac *= 10;
    if (whole > FIKIT_SIM_MAX_DUR_NS / 1000)
        return -ERANGE;
    *ns = whole * 1000 + frac;
    return 0;
}

static int parse_u32(const char *s, uint32_t *out)
{
    if (!*s || (*s == '0' && s[1]))
        return -EINVAL;
    uint64_t v = 0;
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9')
            return -EINVAL;
        v = v * 10 + (uint64_t)(*p - '0');
        if (v > UINT32_MAX)
            return -ERANGE;
    }
    *out = (uint32_t)v;
    return 0;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Decodes %XX in place; rejects a bad escape and %00. */
static int unescape(char *s)
{
    char *o = s;
    for (char *p = s; *p; p++) {
        if (*p == '%') {
            int hi = hexval(p[1]), lo = hi < 0 ? -1 : hexval(p[2]);
            if (hi < 0 || lo < 0 || (hi | lo) == 0)
                return -EINVAL;
            *o++ = (char)(hi * 16 + lo);
            p += 2;
        } else {
            *o++ = *p;
        }
    }
    *o = '\0';
    return 0;
}

static uint64_t fnv(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 0x100000001b3ull;
    }
    return h;
}

/* The index of kernel name s, added if new. */
static int kernel_index(struct parser *P, const char *s, uint32_t *idx)
{
    struct fikit_sim_workload *w = P->w;
    if ((w->nkernels + 1) * 2 > P->nslots) {
        size_t n = P->nslots ? P->nslots * 2 : 256;
        uint32_t *slots = calloc(n, sizeof *slots);
        if (!slots)
            return -ENOMEM;
        for (size_t k = 0; k < w->nkernels; k++) {
            size_t i = fnv(w->kernels[k]) & (n - 1);
            while (slots[i])
                i = (i + 1) & (n - 1);
            slots[i] = (uint32_t)k + 1;
        }
        free(P->slots);
        P->slots = slots;
        P->nslots = n;
    }
    size_t i = fnv(s) & (P->nslots - 1);
    for (; P->slots[i]; i = (i + 1) & (P->nslots - 1)) {
        if (strcmp(w->kernels[P->slots[i] - 1], s) == 0) {
            *idx = P->slots[i] - 1;
            return 0;
        }
    }
    if (fikit_sim_grow((void **)&w->kernels, &P->cap_kernels, w->nkernels + 1, sizeof *w->kernels))
        return -ENOMEM;
    char *copy = strdup(s);
    if (!copy)
        return -ENOMEM;
    w->kernels[w->nkernels] = copy;
    P->slots[i] = (uint32_t)w->nkernels + 1;
    *idx = (uint32_t)w->nkernels++;
    return 0;
}

void fikit_sim_workload_free(struct fikit_sim_workload *w)
{
    if (!w)
        return;
    for (size_t i = 0; i < w->nkernels; i++)
        free(w->kernels[i]);
    free(w->kernels);
    free(w->steps);
    free(w->seqs);
    memset(w, 0, sizeof *w);
}

/* ------------------------------------------------------------- parsing */

#define MAX_FIELDS 8

/* Splits at blanks; a field that begins with '#' begins a comment.
 * Returns the number of fields, or MAX_FIELDS + 1 if there are more. */
static int split(char *line, char **f)
{
    int n = 0;
    char *p = line;
    for (;;) {
        while (*p == ' ' || *p == '\t' || *p == '\r')
            p++;
        if (!*p || *p == '#')
            return n;
        if (n == MAX_FIELDS)
            return MAX_FIELDS + 1;
        f[n++] = p;
        while (*p && *p != ' ' && *p != '\t' && *p != '\r')
            p++;
        if (*p)
            *p++ = '\0';
    }
}

static bool name_ok(const char *s)
{
    if (!*s || *s == '#' || strlen(s) >= sizeof ((struct fikit_sim_workload *)0)->name)
        return false;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p < '!' || *p > '~')
            return false;
    return true;
}

static int parse_launch(struct parser *P, char **f, int n, struct fikit_sim_step *st)
{
    if (n != 6)
        return fail(P, -EINVAL,
                    "L takes 5 fields, 'L HOST_US DUR_US BLOCKS THREADS NAME'; found %d", n - 1);
    int rc = parse_us(f[1], &st->host_ns);
    if (rc || st->host_ns > FIKIT_SIM_MAX_DUR_NS)
        return bad_field(P, "HOST_US", f[1], "accepted: " HOST_RULE);
    rc = parse_us(f[2], &st->dur_ns);
    if (rc || st->dur_ns == 0 || st->dur_ns > FIKIT_SIM_MAX_DUR_NS)
        return bad_field(P, "DUR_US", f[2], "accepted: " DUR_RULE);
    if (parse_u32(f[3], &st->blocks) || st->blocks == 0)
        return bad_field(P, "BLOCKS", f[3], "accepted: the grid's blocks, an integer from 1 to 4294967295");
    if (parse_u32(f[4], &st->threads) || st->threads == 0 || st->threads > FIKIT_SIM_MAX_THREADS)
        return bad_field(P, "THREADS", f[4], "accepted: threads per block, an integer from 1 to 65536");
    char raw[80];
    shown(raw, sizeof raw, f[5]);
    if (unescape(f[5]))
        return fail(P, -EINVAL, "NAME '%s': bad escape; accepted: bytes '!' to '~' other than '%%', "
                                "and %%XX (two hex digits, not %%00) for any other byte",
                    raw);
    if (strlen(f[5]) > FIKIT_SIM_MAX_NAME)
        return fail(P, -EINVAL, "NAME '%s': %zu bytes decoded; accepted: 1 to %u", raw, strlen(f[5]),
                    FIKIT_SIM_MAX_NAME);
    st->op = FIKIT_SIM_LAUNCH;
    rc = kernel_index(P, f[5], &st->kernel);
    return rc ? fail(P, rc, "out of memory") : 0;
}

static int parse_lines(struct parser *P, const char *text, size_t len)
{
    struct fikit_sim_workload *w = P->w;
    char *buf = malloc(FIKIT_SIM_MAX_NAME * 3 + 4096);
    size_t bufcap = FIKIT_SIM_MAX_NAME * 3 + 4096;
    char *f[MAX_FIELDS];
    bool have_name = false, have_kind = false, have_source = false, in_seq = false;
    size_t seq_line = 0, pos = 0;
    int rc = 0;
    if (!buf)
        return fail(P, -ENOMEM, "out of memory");
    while (pos < len) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t ll = nl ? (size_t)(nl - (text + pos)) : len - pos;
        P->line++;
        if (memchr(text + pos, '\0', ll)) {
            rc = fail(P, -EINVAL, "a NUL byte in the line: not a text file");
            break;
        }
        if (ll + 1 > bufcap) {
            char *b = realloc(buf, ll + 1);
            if (!b) {
                rc = fail(P, -ENOMEM, "out of memory");
                break;
            }
            buf = b;
            bufcap = ll + 1;
        }
        memcpy(buf, text + pos, ll);
        buf[ll] = '\0';
        pos += ll + (nl ? 1 : 0);

        if (P->line == 1) {
            char *s = buf;
            int n = split(s, f);
            if (n < 1 || strcmp(f[0], MAGIC) != 0) {
                rc = fail(P, -EINVAL, "not a fikit sim workload (the first line must be '" MAGIC
                                      " %d')",
                          FIKIT_SIM_WORKLOAD_VERSION);
                break;
            }
            if (n != 2 || strcmp(f[1], "1") != 0) {
                char v[80];
                shown(v, sizeof v, n >= 2 ? f[1] : "");
                rc = fail(P, -EPROTO, "format version '%s'; this fikit reads version %d", v,
                          FIKIT_SIM_WORKLOAD_VERSION);
                break;
            }
            continue;
        }
        /* source: the rest of the line, verbatim (free text). */
        {
            char *s = buf;
            while (*s == ' ' || *s == '\t')
                s++;
            if (strncmp(s, "source", 6) == 0 && (s[6] == ' ' || s[6] == '\t' || !s[6] || s[6] == '\r')) {
                if (in_seq || w->nseqs) {
                    rc = fail(P, -EINVAL, "source after the first seq; accepted: header lines "
                                          "(name, kind, source) before the first seq");
                    break;
                }
                if (have_source) {
                    rc = fail(P, -EINVAL, "a second source line; accepted: one");
                    break;
                }
                s += 6;
                while (*s == ' ' || *s == '\t')
                    s++;
                size_t sl = strlen(s);
                while (sl && (s[sl - 1] == ' ' || s[sl - 1] == '\t' || s[sl - 1] == '\r'))
                    s[--sl] = '\0';
                if (sl >= sizeof w->source) {
                    rc = fail(P, -EINVAL, "source: %zu bytes; accepted: at most %zu", sl,
                              sizeof w->source - 1);
                    break;
                }
                for (size_t i = 0; i < sl; i++) {
                    if ((unsigned char)s[i] < 0x20 && s[i] != '\t') {
                        rc = fail(P, -EINVAL, "source: a control byte 0x%02x; accepted: text",
                                  (unsigned char)s[i]);
                        break;
                    }
                }
                if (rc)
                    break;
                memcpy(w->source, s, sl + 1);
                have_source = true;
                continue;
            }
        }
        int n = split(buf, f);
        if (n == 0)
            continue;
        if (n > MAX_FIELDS) {
            rc = fail(P, -EINVAL, "more than %d fields", MAX_FIELDS);
            break;
        }
        const char *rec = f[0];
        if (!strcmp(rec, "name") || !strcmp(rec, "kind")) {
            bool is_name = rec[0] == 'n';
            if (in_seq || w->nseqs) {
                rc = fail(P, -EINVAL, "%s after the first seq; accepted: header lines (name, kind, "
                                      "source) before the first seq", rec);
                break;
            }
            if (is_name ? have_name : have_kind) {
                rc = fail(P, -EINVAL, "a second %s line; accepted: one", rec);
                break;
            }
            if (n != 2) {
                rc = fail(P, -EINVAL, "%s takes one field; found %d", rec, n - 1);
                break;
            }
            if (is_name) {
                if (!name_ok(f[1])) {
                    rc = bad_field(P, "name", f[1], "accepted: 1 to 63 bytes from '!' to '~', not beginning with '#'");
                    break;
                }
                strcpy(w->name, f[1]);
                have_name = true;
            } else {
                if (!strcmp(f[1], "service"))
                    w->kind = FIKIT_SIM_SERVICE;
                else if (!strcmp(f[1], "loop"))
                    w->kind = FIKIT_SIM_LOOP;
                else {
                    rc = bad_field(P, "kind", f[1], "accepted: service, loop");
                    break;
                }
                have_kind = true;
            }
        } else if (!strcmp(rec, "seq")) {
            if (in_seq) {
                rc = fail(P, -EINVAL, "seq inside the seq begun at line %zu; accepted: 'end' "
                                      "first", seq_line);
                break;
            }
            if (!have_name || !have_kind) {
                rc = fail(P, -EINVAL, "seq before the %s line; accepted: the header (name, kind, "
                                      "source) first",
                          !have_name ? "name" : "kind");
                break;
            }
            if (n != 1) {
                rc = fail(P, -EINVAL, "seq takes no fields; found %d", n - 1);
                break;
            }
            if (fikit_sim_grow((void **)&w->seqs, &P->cap_seqs, w->nseqs + 1, sizeof *w->seqs)) {
                rc = fail(P, -ENOMEM, "out of memory");
                break;
            }
            w->seqs[w->nseqs] = (struct fikit_sim_seq){.first = w->nsteps, .n = 0};
            in_seq = true;
            seq_line = P->line;
        } else if (!strcmp(rec, "end")) {
            if (!in_seq) {
                rc = fail(P, -EINVAL, "end outside a seq; accepted: 'end' closes a seq");
                break;
            }
            if (n != 1) {
                rc = fail(P, -EINVAL, "end takes no fields; found %d", n - 1);
                break;
            }
            struct fikit_sim_seq *q = &w->seqs[w->nseqs];
            q->n = w->nsteps - q->first;
            if (q->n == 0) {
                rc = fail(P, -EINVAL, "the seq begun at line %zu has no steps; accepted: at least "
                                      "one L or S", seq_line);
                break;
            }
            if (w->kind == FIKIT_SIM_SERVICE && w->steps[w->nsteps - 1].op != FIKIT_SIM_SYNC) {
                rc = fail(P, -EINVAL, "the seq begun at line %zu ends with L; a service's sequence "
                                      "must end with S (a request ends with a sync)", seq_line);
                break;
            }
            w->nseqs++;
            in_seq = false;
        } else if (!strcmp(rec, "L") || !strcmp(rec, "S")) {
            if (!in_seq) {
                rc = fail(P, -EINVAL, "%s outside a seq; accepted: steps between 'seq' and 'end'", rec);
                break;
            }
            if (w->nsteps == FIKIT_SIM_MAX_STEPS) {
                rc = fail(P, -E2BIG, "more than %u steps; accepted: at most %u in a file",
                          FIKIT_SIM_MAX_STEPS, FIKIT_SIM_MAX_STEPS);
                break;
            }
            if (fikit_sim_grow((void **)&w->steps, &P->cap_steps, w->nsteps + 1, sizeof *w->steps)) {
                rc = fail(P, -ENOMEM, "out of memory");
                break;
            }
            struct fikit_sim_step st = {0};
            if (rec[0] == 'L') {
                rc = parse_launch(P, f, n, &st);
                if (rc)
                    break;
            } else {
                if (n != 2) {
                    rc = fail(P, -EINVAL, "S takes 1 field, 'S HOST_US'; found %d", n - 1);
                    break;
                }
                if (parse_us(f[1], &st.host_ns) || st.host_ns > FIKIT_SIM_MAX_DUR_NS) {
                    rc = bad_field(P, "HOST_US", f[1], "accepted: " HOST_RULE);
                    break;
                }
                st.op = FIKIT_SIM_SYNC;
            }
            w->steps[w->nsteps++] = st;
        } else {
            char v[80];
            shown(v, sizeof v, rec);
            rc = fail(P, -EINVAL, "unknown record '%s'; accepted: name, kind, source, seq, L, S, "
                                  "end, # comments",
                      v);
            break;
        }
    }
    free(buf);
    if (rc)
        return rc;
    if (P->line == 0)
        return fail(P, -EINVAL, "empty file; the first line must be '" MAGIC " %d'",
                    FIKIT_SIM_WORKLOAD_VERSION);
    if (in_seq)
        return fail(P, -EINVAL, "truncated: the seq begun at line %zu has no end", seq_line);
    if (!have_name || !have_kind)
        return fail(P, -EINVAL, "no %s line; accepted: a header with name and kind",
                    !have_name ? "name" : "kind");
    if (w->nseqs == 0)
        return fail(P, -EINVAL, "no seq; accepted: at least one sequence");
    return 0;
}

int fikit_sim_workload_parse(const char *text, size_t len, const char *path,
                             struct fikit_sim_workload *out, struct fikit_err *err)
{
    memset(out, 0, sizeof *out);
    struct parser P = {.path = path ? path : "(workload)", .err = err, .w = out};
    int rc = parse_lines(&P, text ? text : "", text ? len : 0);
    free(P.slots);
    if (rc) {
        fikit_sim_workload_free(out);
        return rc;
    }
    /* Shrink to size: a loaded workload can stay in memory for long. */
    if (out->nsteps) {
        void *s = realloc(out->steps, out->nsteps * sizeof *out->steps);
        if (s)
            out->steps = s;
    }
    return 0;
}

int fikit_sim_workload_load(const char *path, struct fikit_sim_workload *out,
                            struct fikit_err *err)
{
    memset(out, 0, sizeof *out);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        return fikit_err_set(err, -e, "%s: %s", path, strerror(e));
    }
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        close(fd);
        return fikit_err_set(err, -EINVAL, "%s: not a regular file", path);
    }
    if ((uint64_t)sb.st_size > MAX_FILE_BYTES) {
        close(fd);
        return fikit_err_set(err, -EFBIG, "%s: %lld bytes; accepted: at most %u", path,
                             (long long)sb.st_size, MAX_FILE_BYTES);
    }
    size_t cap = (size_t)sb.st_size + 1, len = 0;
    char *text = malloc(cap);
    if (!text) {
        close(fd);
        return fikit_err_set(err, -ENOMEM, "%s: out of memory", path);
    }
    for (;;) {
        if (len == cap) { /* the file grew while read */
            close(fd);
            free(text);
            return fikit_err_set(err, -EAGAIN, "%s: changed while read", path);
        }
        ssize_t n = read(fd, text + len, cap - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int e = errno;
            close(fd);
            free(text);
            return fikit_err_set(err, -e, "%s: %s", path, strerror(e));
        }
        if (n == 0)
            break;
        len += (size_t)n;
    }
    close(fd);
    int rc = fikit_sim_workload_parse(text, len, path, out, err);
    free(text);
    return rc;
}

/* -------------------------------------------------------------- saving */

static void put_us(FILE *f, uint64_t ns)
{
    if (ns % 1000 == 0) {
        fprintf(f, "%" PRIu64, ns / 1000);
        return;
    }
    char frac[8];
    snprintf(frac, sizeof frac, "%03" PRIu64, ns % 1000);
    for (int i = 2; i > 0 && frac[i] == '0'; i--)
        frac[i] = '\0';
    fprintf(f, "%" PRIu64 ".%s", ns / 1000, frac);
}

static void put_name(FILE *f, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p < '!' || *p > '~' || *p == '%' || *p == '#')
            fprintf(f, "%%%02X", *p);
        else
            fputc(*p, f);
    }
}

static int check(const char *path, const struct fikit_sim_workload *w, struct fikit_err *err)
{
#define BAD(...) fikit_err_set(err, -EINVAL, __VA_ARGS__)
    if (!name_ok(w->name))
        return BAD("cannot write %s: the name must be 1 to 63 bytes from '!' to '~'", path);
    if (w->kind != FIKIT_SIM_SERVICE && w->kind != FIKIT_SIM_LOOP)
        return BAD("cannot write %s: kind %d is neither service nor loop", path, (int)w->kind);
    size_t sl = strnlen(w->source, sizeof w->source);
    if (sl == sizeof w->source)
        return BAD("cannot write %s: the source is not terminated", path);
    for (size_t i = 0; i < sl; i++)
        if ((unsigned char)w->source[i] < 0x20 && w->source[i] != '\t')
            return BAD("cannot write %s: the source holds a control byte", path);
    if (sl && (w->source[0] == ' ' || w->source[0] == '\t' || w->source[sl - 1] == ' ' ||
               w->source[sl - 1] == '\t'))
        return BAD("cannot write %s: the source begins or ends with a blank (it would not read "
                   "back the same)", path);
    if (w->nseqs == 0)
        return BAD("cannot write %s: no sequences", path);
    size_t total = 0;
    for (size_t q = 0; q < w->nseqs; q++) {
        const struct fikit_sim_seq *s = &w->seqs[q];
        if (s->n == 0 || s->first > w->nsteps || s->n > w->nsteps - s->first)
            return BAD("cannot write %s: sequence %zu holds steps %zu..%zu of %zu", path, q, s->first,
                       s->first + s->n, w->nsteps);
        if (w->kind == FIKIT_SIM_SERVICE && w->steps[s->first + s->n - 1].op != FIKIT_SIM_SYNC)
            return BAD("cannot write %s: sequence %zu of a service does not end with a sync", path, q);
        total += s->n;
    }
    if (total > FIKIT_SIM_MAX_STEPS)
        return BAD("cannot write %s: %zu steps; at most %u", path, total, FIKIT_SIM_MAX_STEPS);
    for (size_t i = 0; i < w->nsteps; i++) {
        const struct fikit_sim_step *st = &w->steps[i];
        if (st->host_ns > FIKIT_SIM_MAX_DUR_NS)
            return BAD("cannot write %s: step %zu: host time %" PRIu64 " ns; at most 10 s", path, i,
                       st->host_ns);
        if (st->op == FIKIT_SIM_SYNC)
            continue;
        if (st->op != FIKIT_SIM_LAUNCH)
            return BAD("cannot write %s: step %zu: op %u is neither launch nor sync", path, i, st->op);
        if (st->dur_ns == 0 || st->dur_ns > FIKIT_SIM_MAX_DUR_NS)
            return BAD("cannot write %s: step %zu: duration %" PRIu64 " ns; accepted: 1 ns to 10 s",
                       path, i, st->dur_ns);
        if (st->blocks == 0 || st->threads == 0 || st->threads > FIKIT_SIM_MAX_THREADS)
            return BAD("cannot write %s: step %zu: %u blocks of %u threads; accepted: 1 or more "
                       "blocks of 1 to %u threads", path, i, st->blocks, st->threads,
                       FIKIT_SIM_MAX_THREADS);
        if (st->kernel >= w->nkernels || !w->kernels[st->kernel])
            return BAD("cannot write %s: step %zu: kernel %u of %zu", path, i, st->kernel,
                       w->nkernels);
        size_t nl = strlen(w->kernels[st->kernel]);
        if (nl == 0 || nl > FIKIT_SIM_MAX_NAME)
            return BAD("cannot write %s: kernel %u: a name of %zu bytes; accepted: 1 to %u", path,
                       st->kernel, nl, FIKIT_SIM_MAX_NAME);
    }
    return 0;
#undef BAD
}

int fikit_sim_workload_save(const char *path, const struct fikit_sim_workload *w,
                            struct fikit_err *err)
{
    int rc = check(path, w, err);
    if (rc)
        return rc;
    char *text = NULL;
    size_t text_len = 0;
    FILE *mem = open_memstream(&text, &text_len);
    if (!mem)
        return fikit_err_set(err, -ENOMEM, "%s: out of memory", path);
    fprintf(mem, MAGIC " %d\n", FIKIT_SIM_WORKLOAD_VERSION);
    fprintf(mem, "# A workload of fikit sim; format: docs/sim-workload-format.md.\n");
    fprintf(mem, "name %s\nkind %s\n", w->name, w->kind == FIKIT_SIM_SERVICE ? "service" : "loop");
    if (w->source[0])
        fprintf(mem, "source %s\n", w->source);
    for (size_t q = 0; q < w->nseqs; q++) {
        fputs("seq\n", mem);
        const struct fikit_sim_seq *s = &w->seqs[q];
        for (size_t i = s->first; i < s->first + s->n; i++) {
            const struct fikit_sim_step *st = &w->steps[i];
            fputs(st->op == FIKIT_SIM_LAUNCH ? "L " : "S ", mem);
            put_us(mem, st->host_ns);
            if (st->op == FIKIT_SIM_LAUNCH) {
                fputc(' ', mem);
                put_us(mem, st->dur_ns);
                fprintf(mem, " %u %u ", st->blocks, st->threads);
                put_name(mem, w->kernels[st->kernel]);
            }
            fputc('\n', mem);
        }
        fputs("end\n", mem);
    }
    if (fclose(mem) != 0 || !text) {
        free(text);
        return fikit_err_set(err, -ENOMEM, "%s: out of memory", path);
    }

    rc = fikit_file_replace(path, text, text_len);
    free(text);
    if (rc == -ENOMEM)
        return fikit_err_set(err, rc, "%s: out of memory", path);
    if (rc)
        return fikit_err_set(err, rc, "cannot write %s: %s; the file there is kept", path,
                             strerror(-rc));
    return 0;
}
