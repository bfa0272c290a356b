/*
 * tests/counters_encode/test_cpuid.c: CPU identification (counters/cpuid.c).
 * mw_uarch_from_cpuid over a table of real CPUs (vendor, family, model as the
 * kernel prints them), and mw_cpu_identify on the cpuinfo fixtures in
 * tests/fixtures/cpuinfo/ (see its README for where each one comes from).
 */
#include <memwatch/catalogue.h>

#include <errno.h>

#include "mw_test.h"

typedef struct cpu_row {
    const char *cpu; /* a real part with this CPUID */
    const char *vendor;
    unsigned family, model;
    mw_uarch expect;
    int line;
} cpu_row;

#define I "GenuineIntel"
#define A "AuthenticAMD"
#define ROW(cpu, v, f, m, u)                                                                       \
    {                                                                                              \
        cpu, v, f, m, u, __LINE__                                                                  \
    }
static const cpu_row cpus[] = {
    ROW("Xeon E5-2699 v3 (Haswell-EP)", I, 6, 0x3F, MW_UARCH_HSW_EP),
    ROW("Xeon E5-2699 v4 (Broadwell-EP)", I, 6, 0x4F, MW_UARCH_BDW_EP),
    ROW("Xeon D-1541 (Broadwell-DE)", I, 6, 0x56, MW_UARCH_BDW_EP),
    ROW("Xeon Gold 6148 (Skylake-SP)", I, 6, 0x55, MW_UARCH_SKX),
    ROW("Xeon Platinum 8280 (Cascade Lake, same model 0x55)", I, 6, 85, MW_UARCH_SKX),
    ROW("Xeon Platinum 8380 (Ice Lake-SP)", I, 6, 0x6A, MW_UARCH_ICX),
    ROW("Xeon D-2700 (Ice Lake-D)", I, 6, 0x6C, MW_UARCH_ICX),
    ROW("Xeon Platinum 8480+ (Sapphire Rapids)", I, 6, 0x8F, MW_UARCH_SPR),
    ROW("Xeon Platinum 8592+ (Emerald Rapids)", I, 6, 207, MW_UARCH_SPR),
    ROW("Xeon 6980P (Granite Rapids-AP)", I, 6, 0xAD, MW_UARCH_GNR),
    ROW("Xeon 6 SoC (Granite Rapids-D)", I, 6, 0xAE, MW_UARCH_GNR),
    ROW("Core i7-6700 (Skylake-S)", I, 6, 94, MW_UARCH_SKL),
    ROW("Core i7-6500U (Skylake-U)", I, 6, 0x4E, MW_UARCH_SKL),
    ROW("Core i7-8550U (Kaby Lake R)", I, 6, 0x8E, MW_UARCH_SKL),
    ROW("Core i9-9900K (Coffee Lake)", I, 6, 0x9E, MW_UARCH_SKL),
    ROW("Core i9-10900K (Comet Lake-S)", I, 6, 0xA5, MW_UARCH_SKL),
    ROW("Core i7-10510U (Comet Lake-U)", I, 6, 0xA6, MW_UARCH_SKL),
    ROW("Core i7-1065G7 (Ice Lake-U)", I, 6, 0x7E, MW_UARCH_ICL),
    ROW("Ice Lake client 0x7D", I, 6, 0x7D, MW_UARCH_ICL),
    ROW("Core i9-12900K (Alder Lake-S)", I, 6, 0x97, MW_UARCH_ADL),
    ROW("Core i7-1260P (Alder Lake-P)", I, 6, 0x9A, MW_UARCH_ADL),
    ROW("Core i9-13900K (Raptor Lake-S)", I, 6, 0xB7, MW_UARCH_ADL),
    ROW("Core i7-1360P (Raptor Lake-P)", I, 6, 0xBA, MW_UARCH_ADL),
    ROW("Core i9-14900K (Raptor Lake refresh 0xBF)", I, 6, 0xBF, MW_UARCH_ADL),
    ROW("Xeon Phi 7250 (Knights Landing)", I, 6, 0x57, MW_UARCH_KNL),
    ROW("Xeon Phi 7295 (Knights Mill)", I, 6, 0x85, MW_UARCH_KNL),
    ROW("Core i7-4770 (Haswell client: no table)", I, 6, 0x3C, MW_UARCH_UNKNOWN),
    ROW("Xeon E5-2680 v2 (Ivy Bridge-EP: no table)", I, 6, 0x3E, MW_UARCH_UNKNOWN),
    ROW("Atom C3958 (Denverton: no table)", I, 6, 0x5F, MW_UARCH_UNKNOWN),
    ROW("Xeon 6780E (Sierra Forest: no table)", I, 6, 0xAF, MW_UARCH_UNKNOWN),
    ROW("Pentium 4 (family 15)", I, 15, 0x3F, MW_UARCH_UNKNOWN),
    /* AMD family 0x17 by the kernel's arch/x86/kernel/cpu/amd.c: Zen 1 models
     * 0x00-0x2F and 0x50-0x5F, Zen 2 0x30-0x4F, 0x60-0x7F, 0x90-0x91, 0xA0-0xAF. */
    ROW("EPYC 7601 (Zen 1 Naples)", A, 0x17, 0x01, MW_UARCH_ZEN1),
    ROW("Ryzen 7 1800X (Zen 1 Summit Ridge)", A, 0x17, 0x01, MW_UARCH_ZEN1),
    ROW("Ryzen 7 2700X (Zen+ Pinnacle Ridge)", A, 0x17, 0x08, MW_UARCH_ZEN1),
    ROW("Ryzen 5 2400G (Zen 1 Raven Ridge)", A, 0x17, 0x11, MW_UARCH_ZEN1),
    ROW("Ryzen 5 3400G (Zen+ Picasso)", A, 0x17, 0x18, MW_UARCH_ZEN1),
    ROW("Athlon Silver 3050U (Zen 1 Dali)", A, 0x17, 0x20, MW_UARCH_ZEN1),
    ROW("last model of the first Zen 1 range", A, 0x17, 0x2F, MW_UARCH_ZEN1),
    ROW("first model of the first Zen 2 range", A, 0x17, 0x30, MW_UARCH_ZEN2),
    ROW("last model of the first Zen 2 range", A, 0x17, 0x4F, MW_UARCH_ZEN2),
    ROW("Subor Z+ APU (Zen 1 Fenghuang)", A, 0x17, 0x50, MW_UARCH_ZEN1),
    ROW("last model of the second Zen 1 range", A, 0x17, 0x5F, MW_UARCH_ZEN1),
    ROW("model 0x80: no Zen generation in amd.c", A, 0x17, 0x80, MW_UARCH_UNKNOWN),
    ROW("EPYC 7742 (Zen 2 Rome)", A, 0x17, 0x31, MW_UARCH_ZEN2),
    ROW("Ryzen 7 4800U (Zen 2 Renoir)", A, 0x17, 0x60, MW_UARCH_ZEN2),
    ROW("Ryzen 7 5700U (Zen 2 Lucienne)", A, 0x17, 0x68, MW_UARCH_ZEN2),
    ROW("Ryzen 9 3950X (Zen 2 Matisse)", A, 0x17, 0x71, MW_UARCH_ZEN2),
    ROW("Steam Deck APU (Zen 2 Van Gogh)", A, 0x17, 0x90, MW_UARCH_ZEN2),
    ROW("Ryzen 3 7320U (Zen 2 Mendocino)", A, 0x17, 0xA0, MW_UARCH_ZEN2),
    ROW("EPYC 7763 (Zen 3 Milan)", A, 0x19, 0x01, MW_UARCH_ZEN3),
    ROW("Ryzen 9 5950X (Zen 3 Vermeer)", A, 0x19, 0x21, MW_UARCH_ZEN3),
    ROW("Ryzen 7 5800U (Zen 3 Cezanne)", A, 0x19, 0x50, MW_UARCH_ZEN3),
    ROW("Ryzen 7 6800U (Zen 3+ Rembrandt)", A, 0x19, 0x44, MW_UARCH_ZEN3),
    ROW("EPYC 9654 (Zen 4 Genoa)", A, 0x19, 0x11, MW_UARCH_ZEN4),
    ROW("EPYC 9754 (Zen 4c Bergamo)", A, 0x19, 0xA0, MW_UARCH_ZEN4),
    ROW("Ryzen 9 7950X (Zen 4 Raphael)", A, 0x19, 0x61, MW_UARCH_ZEN4),
    ROW("Ryzen 7 7840U (Zen 4 Phoenix)", A, 0x19, 0x74, MW_UARCH_ZEN4),
    ROW("EPYC 9755 (Zen 5 Turin)", A, 0x1A, 0x02, MW_UARCH_ZEN5),
    ROW("EPYC 9965 (Zen 5c Turin dense)", A, 0x1A, 0x11, MW_UARCH_ZEN5),
    ROW("Ryzen 9 9950X (Zen 5 Granite Ridge)", A, 0x1A, 0x44, MW_UARCH_ZEN5),
    ROW("Ryzen AI 9 HX 370 (Zen 5 Strix Point)", A, 0x1A, 0x24, MW_UARCH_ZEN5),
    ROW("Hygon C86 (family 0x18: no table)", "HygonGenuine", 0x18, 0x01, MW_UARCH_UNKNOWN),
    ROW("Intel family/model under an AMD vendor string", A, 6, 0x55, MW_UARCH_UNKNOWN),
};

typedef struct fixture_row {
    const char *dir; /* under tests/fixtures/cpuinfo */
    int rc;
    const char *vendor;
    unsigned family, model, stepping;
    const char *model_name, *microcode;
    mw_uarch uarch;
    int line;
} fixture_row;

#define FIX(d, rc, v, f, m, s, n, mc, u)                                                           \
    {                                                                                              \
        d, rc, v, f, m, s, n, mc, u, __LINE__                                                      \
    }
static const fixture_row fixtures[] = {
    FIX("amd_epyc_dev_vm", 0, A, 26, 2, 1, "AMD EPYC", "0x1000065", MW_UARCH_ZEN5),
    FIX("amd_epyc_9654_genoa", 0, A, 25, 17, 1, "AMD EPYC 9654 96-Core Processor", "0xa101144",
        MW_UARCH_ZEN4),
    FIX("amd_epyc_7742_rome", 0, A, 23, 49, 0, "AMD EPYC 7742 64-Core Processor", "0x830104d",
        MW_UARCH_ZEN2),
    FIX("amd_epyc_7601_naples", 0, A, 23, 1, 2, "AMD EPYC 7601 32-Core Processor", "0x8001250",
        MW_UARCH_ZEN1),
    FIX("intel_xeon_8592p_emr", 0, I, 6, 207, 2, "INTEL(R) XEON(R) PLATINUM 8592+", "0x21000240",
        MW_UARCH_SPR),
    FIX("intel_xeon_8380_icx", 0, I, 6, 106, 6, "Intel(R) Xeon(R) Platinum 8380 CPU @ 2.30GHz",
        "0xd0003a5", MW_UARCH_ICX),
    FIX("intel_xeon_6148_skx", 0, I, 6, 85, 4, "Intel(R) Xeon(R) Gold 6148 CPU @ 2.40GHz",
        "0x2006e05", MW_UARCH_SKX),
    FIX("intel_core_i7_6700_skl", 0, I, 6, 94, 3, "Intel(R) Core(TM) i7-6700 CPU @ 3.40GHz", "0xf0",
        MW_UARCH_SKL),
    FIX("no_trailing_newline", 0, I, 6, 85, 4, "Intel(R) Xeon(R) Gold 6148 CPU @ 2.40GHz",
        "0x2006e05", MW_UARCH_SKX),
    FIX("stepping_unknown", 0, I, 6, 106, 0, "Intel(R) Xeon(R) Platinum 8380 CPU @ 2.30GHz",
        "0xffffffff", MW_UARCH_ICX),
    FIX("huge_flags_line", 0, A, 25, 17, 1, "AMD EPYC 9654 96-Core Processor", "0xa101144",
        MW_UARCH_ZEN4),
    FIX("broken_missing_model", MW_ERR_PARSE, NULL, 0, 0, 0, NULL, NULL, MW_UARCH_UNKNOWN),
    FIX("broken_bad_family", MW_ERR_PARSE, NULL, 0, 0, 0, NULL, NULL, MW_UARCH_UNKNOWN),
    FIX("empty", MW_ERR_PARSE, NULL, 0, 0, 0, NULL, NULL, MW_UARCH_UNKNOWN),
    FIX("no_such_fixture", -ENOENT, NULL, 0, 0, 0, NULL, NULL, MW_UARCH_UNKNOWN),
};

static void quiet(int level, const char *msg, void *user)
{
    (void)level;
    (void)msg;
    (void)user;
}

int main(void)
{
    mw_set_log(quiet, NULL, MW_LOG_DEBUG);

    for (size_t i = 0; i < sizeof cpus / sizeof cpus[0]; i++) {
        const cpu_row *r = &cpus[i];
        mw_uarch got = mw_uarch_from_cpuid(r->vendor, r->family, r->model);
        MW_CHECK_AT(__FILE__, r->line, got == r->expect,
                    "%s: %s family 0x%x model 0x%x -> %s, "
                    "expected %s",
                    r->cpu, r->vendor, r->family, r->model, mw_uarch_name(got),
                    mw_uarch_name(r->expect));
    }
    MW_CHECK(mw_uarch_from_cpuid(NULL, 6, 0x55) == MW_UARCH_UNKNOWN, "NULL vendor");

    for (size_t i = 0; i < sizeof fixtures / sizeof fixtures[0]; i++) {
        const fixture_row *f = &fixtures[i];
        char root[4096];
        mw_cpu_id id;
        snprintf(root, sizeof root, "%s/cpuinfo/%s", MW_FIXTURES, f->dir);
        memset(&id, 0x5a, sizeof id);
        int rc = mw_cpu_identify(root, &id);
        MW_CHECK_AT(__FILE__, f->line, rc == f->rc, "%s: rc %d (%s), expected %d", f->dir, rc,
                    mw_strerror(rc), f->rc);
        if (rc != 0 || f->rc != 0)
            continue;
        MW_CHECK_AT(__FILE__, f->line, !strcmp(id.vendor, f->vendor), "%s: vendor '%s'", f->dir,
                    id.vendor);
        MW_CHECK_AT(__FILE__, f->line,
                    id.family == f->family && id.model == f->model && id.stepping == f->stepping,
                    "%s: family %u model %u stepping %u", f->dir, id.family, id.model, id.stepping);
        MW_CHECK_AT(__FILE__, f->line, !strcmp(id.model_name, f->model_name), "%s: model name '%s'",
                    f->dir, id.model_name);
        MW_CHECK_AT(__FILE__, f->line, !strcmp(id.microcode, f->microcode), "%s: microcode '%s'",
                    f->dir, id.microcode);
        MW_CHECK_AT(__FILE__, f->line, id.uarch == f->uarch, "%s: uarch %s, expected %s", f->dir,
                    mw_uarch_name(id.uarch), mw_uarch_name(f->uarch));
    }
    MW_CHECK_INT(mw_cpu_identify(MW_FIXTURES "/cpuinfo/amd_epyc_dev_vm", NULL), -EINVAL);

    /* This machine: /proc/cpuinfo must parse, whatever the CPU. */
    mw_cpu_id self;
    int rc = mw_cpu_identify(NULL, &self);
    MW_CHECK(rc == 0, "/proc/cpuinfo: %s", mw_strerror(rc));
    if (rc == 0) {
        MW_CHECK(self.vendor[0] != '\0', "empty vendor");
        printf("this machine: %s family 0x%x model 0x%x stepping %u \"%s\" microcode %s -> %s\n",
               self.vendor, self.family, self.model, self.stepping, self.model_name, self.microcode,
               mw_uarch_long_name(self.uarch));
    }
    return mw_test_done();
}
