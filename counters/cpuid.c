/*
 * counters/cpuid.c: who is this CPU. Reads vendor, family, model, stepping,
 * model name and microcode of the first processor in <proc_root>/cpuinfo and
 * maps vendor/family/model to a memwatch microarchitecture through the
 * models of each catalogue descriptor (mw_uarch_from_cpuid).
 *
 * May call: libc (open/read, no stdio streams, no allocation) and mw_log on
 * failures. Thread safety: no state; safe from any thread. Not for signal
 * handlers (mw_log, snprintf).
 *
 * Sources of the model numbers:
 *  - Intel family 6: the Linux kernel's arch/x86/include/asm/intel-family.h
 *    (INTEL_HASWELL_X 0x3F, INTEL_BROADWELL_X 0x4F, INTEL_BROADWELL_D 0x56,
 *    INTEL_SKYLAKE_X 0x55, INTEL_ICELAKE_X 0x6A, INTEL_ICELAKE_D 0x6C,
 *    INTEL_SAPPHIRERAPIDS_X 0x8F, INTEL_EMERALDRAPIDS_X 0xCF,
 *    INTEL_GRANITERAPIDS_X 0xAD, INTEL_GRANITERAPIDS_D 0xAE, INTEL_SKYLAKE_L
 *    0x4E, INTEL_SKYLAKE 0x5E, INTEL_KABYLAKE_L 0x8E, INTEL_KABYLAKE 0x9E,
 *    INTEL_COMETLAKE 0xA5, INTEL_COMETLAKE_L 0xA6, INTEL_ICELAKE 0x7D,
 *    INTEL_ICELAKE_L 0x7E, INTEL_ALDERLAKE 0x97, INTEL_ALDERLAKE_L 0x9A,
 *    INTEL_RAPTORLAKE 0xB7, INTEL_RAPTORLAKE_P 0xBA, INTEL_RAPTORLAKE_S 0xBF,
 *    INTEL_XEON_PHI_KNL 0x57, INTEL_XEON_PHI_KNM 0x85), which follows the
 *    Intel SDM vol. 4 table 2-1.
 *  - AMD: the kernel's arch/x86/kernel/cpu/amd.c (bsp_init_amd: Zen 1 family
 *    0x17 models 0x00-0x2F and 0x50-0x5F, Zen 2 0x30-0x4F, 0x60-0x7F,
 *    0x90-0x91, 0xA0-0xAF; Zen 3 family 0x19 0x00-0x0F, 0x20-0x5F; Zen 4
 *    0x10-0x1F, 0x60-0xAF; Zen 5 family 0x1A 0x00-0x4F, 0x60-0x7F) and the
 *    AMD PPRs (54945 family 17h models 00h-0Fh: Naples, Summit Ridge; 55803
 *    family 17h model 31h: Rome; 55898 family 19h model 01h: Milan; 57095
 *    family 1Ah model 02h: Turin). Zen 1 and Zen+ (Naples, Summit/Pinnacle
 *    Ridge, Raven Ridge, Picasso, Dali, Fenghuang) are zen1
 *    (counters/tables/zen1.h): amd_df, ibs_lat and probe_lat, as Zen 2, since
 *    none of those reads a core event; Hygon's family 0x18 stays UNKNOWN.
 */
#include <memwatch/catalogue.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The models each microarchitecture covers are in its descriptor
 * (counters/tables/<name>.h); a CPU in none of them is UNKNOWN. */
MW_API mw_uarch mw_uarch_from_cpuid(const char *vendor, unsigned family, unsigned model)
{
    if (!vendor)
        return MW_UARCH_UNKNOWN;
    for (int u = 0; u < MW_UARCH_COUNT; u++) {
        const mw_uarch_desc *d = mw_uarch_desc_of((mw_uarch)u);
        for (size_t i = 0; d && i < d->n_models; i++) {
            const mw_cpu_model *r = &d->models[i];
            if (r->family == family && model >= r->model_lo && model <= r->model_hi &&
                strcmp(r->vendor, vendor) == 0)
                return (mw_uarch)u;
        }
    }
    return MW_UARCH_UNKNOWN;
}

/* Copies the value part of "key\t: value\n" into dst, trimmed. */
static void mw_cpuid_copy_value(char *dst, size_t cap, const char *val)
{
    while (*val == ' ' || *val == '\t')
        val++;
    size_t n = strlen(val);
    while (n > 0 && isspace((unsigned char)val[n - 1]))
        n--;
    if (n >= cap)
        n = cap - 1;
    memcpy(dst, val, n);
    dst[n] = '\0';
}

/* Parses an unsigned number ("6", "0x1000065") into *out; 0 or MW_ERR_PARSE. */
static int mw_cpuid_parse_uint(const char *val, unsigned *out)
{
    char *end;
    while (*val == ' ' || *val == '\t')
        val++;
    errno = 0;
    unsigned long v = strtoul(val, &end, 0);
    if (end == val || errno || v > 0xFFFFFFFFul)
        return MW_ERR_PARSE;
    while (*end == ' ' || *end == '\t')
        end++;
    if (*end)
        return MW_ERR_PARSE;
    *out = (unsigned)v;
    return 0;
}

/*
 * mw_cpu_identify: fills *out from <proc_root>/cpuinfo ("/proc" when proc_root
 * is NULL). Only the first processor block is read (from the first 16 KiB of the
 * file, which holds it whole on every x86 kernel); vendor, family and model are
 * required (MW_ERR_PARSE when one is missing or malformed); model name, stepping
 * and microcode are optional (empty / 0). Returns -errno when the file cannot be
 * read. Uses open/read and a stack buffer: no stdio, no allocation.
 */
MW_API int mw_cpu_identify(const char *proc_root, mw_cpu_id *out)
{
    char path[4096];
    char buf[16384];
    size_t len = 0;
    int rc = 0, eof = 0;
    int have_vendor = 0, have_family = 0, have_model = 0, seen_processor = 0;
    int fd = -1;

    if (!out)
        return -EINVAL;
    memset(out, 0, sizeof *out);
    if (!proc_root)
        proc_root = "/proc";
    if ((size_t)snprintf(path, sizeof path, "%s/cpuinfo", proc_root) >= sizeof path)
        return -ENAMETOOLONG;
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        rc = -errno;
        mw_log(MW_LOG_DEBUG, "cpuid: cannot open %s: %s", path, mw_strerror(rc));
        return rc;
    }
    while (len < sizeof buf - 1) {
        ssize_t n = read(fd, buf + len, sizeof buf - 1 - len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            rc = -errno;
            goto out;
        }
        if (n == 0) {
            eof = 1;
            break;
        }
        len += (size_t)n;
    }
    buf[len] = '\0';

    for (char *line = buf; *line;) {
        char *nl = strchr(line, '\n');
        if (!nl && !eof)
            break; /* a line cut by the buffer's end: ignore it */
        char *next = nl ? nl + 1 : line + strlen(line);
        if (nl)
            *nl = '\0';
        if (line[0] == '\0') {
            if (seen_processor && have_vendor)
                break; /* end of the first processor block */
            line = next;
            continue;
        }
        char *colon = strchr(line, ':');
        if (colon) {
            size_t klen = (size_t)(colon - line);
            while (klen > 0 && (line[klen - 1] == ' ' || line[klen - 1] == '\t'))
                klen--;
            const char *val = colon + 1;
#define MW_KEY(k) (klen == sizeof(k) - 1 && strncmp(line, k, klen) == 0)
            if (MW_KEY("processor")) {
                seen_processor = 1;
            } else if (MW_KEY("vendor_id")) {
                mw_cpuid_copy_value(out->vendor, sizeof out->vendor, val);
                have_vendor = out->vendor[0] != '\0';
            } else if (MW_KEY("cpu family")) {
                if (mw_cpuid_parse_uint(val, &out->family) == 0)
                    have_family = 1;
                else
                    rc = MW_ERR_PARSE;
            } else if (MW_KEY("model")) {
                if (mw_cpuid_parse_uint(val, &out->model) == 0)
                    have_model = 1;
                else
                    rc = MW_ERR_PARSE;
            } else if (MW_KEY("stepping")) {
                if (mw_cpuid_parse_uint(val, &out->stepping) != 0)
                    out->stepping = 0; /* "unknown" on some hypervisors */
            } else if (MW_KEY("model name")) {
                mw_cpuid_copy_value(out->model_name, sizeof out->model_name, val);
            } else if (MW_KEY("microcode")) {
                mw_cpuid_copy_value(out->microcode, sizeof out->microcode, val);
            }
#undef MW_KEY
        }
        line = next;
    }
    if (rc == 0 && !(have_vendor && have_family && have_model)) {
        mw_log(MW_LOG_WARN, "cpuid: %s lacks%s%s%s", path, have_vendor ? "" : " vendor_id",
               have_family ? "" : " 'cpu family'", have_model ? "" : " model");
        rc = MW_ERR_PARSE;
    }
    if (rc == MW_ERR_PARSE)
        mw_log(MW_LOG_WARN, "cpuid: cannot identify the CPU from %s", path);
    if (rc == 0)
        out->uarch = mw_uarch_from_cpuid(out->vendor, out->family, out->model);
out:
    if (rc < 0 && rc != MW_ERR_PARSE)
        mw_log(MW_LOG_DEBUG, "cpuid: cannot read %s: %s", path, mw_strerror(rc));
    close(fd);
    return rc;
}
