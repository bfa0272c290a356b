/*
 * tests/profile/test_profile.c: machine identity from fixture trees, the
 * default path, a written profile read back, and every kind of damaged or
 * foreign file refused with a logged reason -- including every truncation and
 * many byte flips of a valid profile, none of which may crash the reader.
 */
#include "mw_test.h"

#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <memwatch/profile.h>
#include <memwatch/validate.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmpdir[256];
static char last_log[1024];

static void capture(int level, const char *msg, void *user)
{
    (void)level;
    (void)user;
    snprintf(last_log, sizeof last_log, "%s", msg);
}

static void put(const char *rel, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", tmpdir, rel);
    for (char *p = path + strlen(tmpdir) + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            mkdir(path, 0755);
            *p = '/';
        }
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        exit(1);
    }
    fputs(text, f);
    fclose(f);
}

static void test_identity(void)
{
    put("proc/cpuinfo", "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\n"
                        "model\t\t: 207\nmodel name\t: INTEL(R) XEON(R) PLATINUM 8568Y+\n"
                        "stepping\t: 2\nmicrocode\t: 0x21000230\n\n"
                        "processor\t: 1\nvendor_id\t: GenuineIntel\ncpu family\t: 6\n"
                        "model\t\t: 207\nmodel name\t: INTEL(R) XEON(R) PLATINUM 8568Y+\n"
                        "stepping\t: 2\nmicrocode\t: 0x21000230\n\n");
    put("proc/sys/kernel/osrelease", "6.8.0-45-generic\n");
    put("proc/meminfo", "MemTotal:       263921152 kB\nMemFree: 1 kB\n");
    put("sys/devices/system/node/node0/x", "");
    put("sys/devices/system/node/node1/x", "");
    put("sys/devices/system/edac/mc/mc0/dimm0/size", "32768\n");
    put("sys/devices/system/edac/mc/mc0/dimm1/size", "32768\n");
    char proc[300], sys[300], id[192], id2[192];
    snprintf(proc, sizeof proc, "%s/proc", tmpdir);
    snprintf(sys, sizeof sys, "%s/sys", tmpdir);
    int rc = mw_machine_identity(proc, sys, id, sizeof id);
    MW_CHECK(rc > 0, "identity rc %d", rc);
    MW_CHECK(strstr(id, "cpu=INTEL(R) XEON(R) PLATINUM 8568Y+;") != NULL, "%s", id);
    MW_CHECK(strstr(id, "fms=6/207/2") != NULL, "%s", id);
    MW_CHECK(strstr(id, "ucode=0x21000230") != NULL, "%s", id);
    MW_CHECK(strstr(id, "kernel=6.8.0-45-generic;") != NULL, "%s", id);
    MW_CHECK(strstr(id, "cpus=2;") != NULL, "%s", id);
    MW_CHECK(strstr(id, "nodes=2;") != NULL, "%s", id);
    MW_CHECK(strstr(id, "mem=252GiB,2 dimms 65536MiB") != NULL, "%s", id);
    /* a microcode update makes another identity */
    put("proc/cpuinfo", "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\n"
                        "model\t\t: 207\nmodel name\t: INTEL(R) XEON(R) PLATINUM 8568Y+\n"
                        "stepping\t: 2\nmicrocode\t: 0x21000240\n\n");
    MW_CHECK(mw_machine_identity(proc, sys, id2, sizeof id2) > 0, "second identity");
    MW_CHECK(strcmp(id, id2) != 0, "microcode must change the identity");
    char small[16];
    MW_CHECK_INT(mw_machine_identity(proc, sys, small, sizeof small), MW_ERR_TOOBIG);
    char none[300];
    snprintf(none, sizeof none, "%s/nothing", tmpdir);
    MW_CHECK(mw_machine_identity(none, sys, id, sizeof id) < 0, "no cpuinfo fails");
    /* this machine */
    MW_CHECK(mw_machine_identity(NULL, NULL, id, sizeof id) > 0, "this machine: %s", id);
    /* the identity the processes take: MEMWATCH_MACHINE where it is usable,
     * else this machine's */
    char taken[192];
    unsetenv("MEMWATCH_MACHINE");
    MW_CHECK(mw_machine_identity_taken(taken, sizeof taken) > 0 && !strcmp(taken, id),
             "unset: %s", taken);
    setenv("MEMWATCH_MACHINE", "mw-test-machine", 1);
    MW_CHECK_INT(mw_machine_identity_taken(taken, sizeof taken), 15);
    MW_CHECK(!strcmp(taken, "mw-test-machine"), "handed down: %s", taken);
    /* handed down on this host: taken; on another (a launcher carried it
     * here): this machine's */
    char here[128];
    mw_host_name(here, sizeof here);
    MW_CHECK(here[0] && !strchr(here, ' ') && !strchr(here, '/'), "host name: '%s'", here);
    setenv("MEMWATCH_HANDED", here, 1);
    MW_CHECK(!mw_handed_elsewhere(), "this host is elsewhere");
    MW_CHECK(mw_machine_identity_taken(taken, sizeof taken) == 15 &&
                 !strcmp(taken, "mw-test-machine"),
             "handed here: %s", taken);
    setenv("MEMWATCH_HANDED", "mw-other-host", 1);
    MW_CHECK(mw_handed_elsewhere(), "another host is here");
    MW_CHECK(mw_machine_identity_taken(taken, sizeof taken) > 0 && !strcmp(taken, id),
             "handed on another host: %s", taken);
    unsetenv("MEMWATCH_HANDED");
    setenv("MEMWATCH_MACHINE", "two\nlines", 1); /* the library refuses it too */
    MW_CHECK(mw_machine_identity_taken(taken, sizeof taken) > 0 && !strcmp(taken, id),
             "with a newline: %s", taken);
    setenv("MEMWATCH_MACHINE", "longer-than-sixteen-bytes", 1);
    MW_CHECK_INT(mw_machine_identity_taken(small, sizeof small), MW_ERR_TOOBIG);
    unsetenv("MEMWATCH_MACHINE");
}

static void test_default_path(void)
{
    char buf[512];
    setenv("XDG_DATA_HOME", "/data/x", 1);
    MW_CHECK_INT(mw_profile_default_path(buf, sizeof buf), 0);
    MW_CHECK_STR(buf, "/data/x/memwatch/profile.json");
    setenv("XDG_DATA_HOME", "relative/ignored", 1);
    setenv("HOME", "/home/u", 1);
    MW_CHECK_INT(mw_profile_default_path(buf, sizeof buf), 0);
    MW_CHECK_STR(buf, "/home/u/.local/share/memwatch/profile.json");
    unsetenv("XDG_DATA_HOME");
    unsetenv("HOME");
    MW_CHECK_INT(mw_profile_default_path(buf, sizeof buf), -ENOENT);
    setenv("HOME", "/home/u", 1);
    MW_CHECK_INT(mw_profile_default_path(buf, 8), MW_ERR_TOOBIG);
}

static void sample_profile(mw_profile *p)
{
    memset(p, 0, sizeof *p);
    p->version = MW_PROFILE_VERSION;
    MW_CHECK(mw_machine_identity(NULL, NULL, p->identity, sizeof p->identity) > 0, "identity");
    snprintf(p->created, sizeof p->created, "2026-11-21T23:30:00Z");
    p->tsc_hz = 2.595e9;
    p->peak_bw = 31.7e9;
    p->idle_latency_ns = 141.25;
    snprintf(p->lat_method, sizeof p->lat_method, "probe_lat");
    p->lat_threshold_ns = 162.4375;
    p->bw_factor = 1.0;
    p->n_methods = 2;
    snprintf(p->methods[0].name, sizeof p->methods[0].name, "probe_lat");
    snprintf(p->methods[0].verdict, sizeof p->methods[0].verdict, "accurate");
    p->methods[0].factor = 1;
    p->methods[0].cv = 0.0125;
    p->methods[0].false_pos = 0.03125;
    p->methods[0].false_neg = 1;
    p->methods[0].threshold = 162.4375;
    snprintf(p->methods[0].reason, sizeof p->methods[0].reason, "steady \"quoted\" \\ reason");
    snprintf(p->methods[1].name, sizeof p->methods[1].name, "imc_cas");
    snprintf(p->methods[1].verdict, sizeof p->methods[1].verdict, "unavailable");
    p->methods[1].factor = 1;
    snprintf(p->methods[1].reason, sizeof p->methods[1].reason, "no uncore_imc PMU");
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        b = NULL;
    }
    fclose(f);
    if (b)
        b[n] = 0;
    *len = (size_t)n;
    return b;
}

static void spit(const char *path, const char *b, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        exit(1);
    fwrite(b, 1, n, f);
    fclose(f);
}

static char *replace(const char *s, const char *from, const char *to)
{
    const char *at = strstr(s, from);
    if (!at)
        return NULL;
    size_t n = strlen(s) - strlen(from) + strlen(to) + 1;
    char *r = malloc(n);
    snprintf(r, n, "%.*s%s%s", (int)(at - s), s, to, at + strlen(from));
    return r;
}

static void test_round_trip_and_refusals(void)
{
    mw_profile p, q;
    sample_profile(&p);
    char path[512], bad[512];
    snprintf(path, sizeof path, "%s/data/memwatch/profile.json", tmpdir);
    snprintf(bad, sizeof bad, "%s/bad.json", tmpdir);
    MW_CHECK_INT(mw_profile_write(path, &p, NULL, NULL), 0);
    /* read back by the next run, identity checked against this machine */
    MW_CHECK_INT(mw_profile_load(path, 1, &q), 0);
    MW_CHECK_INT(q.version, MW_PROFILE_VERSION);
    MW_CHECK_STR(q.identity, p.identity);
    MW_CHECK_STR(q.created, p.created);
    MW_CHECK_STR(q.lat_method, "probe_lat");
    MW_CHECK_STR(q.bw_method, "");
    MW_CHECK(q.lat_threshold_ns == p.lat_threshold_ns, "threshold %g", q.lat_threshold_ns);
    MW_CHECK(q.idle_latency_ns == p.idle_latency_ns, "idle %g", q.idle_latency_ns);
    MW_CHECK(q.peak_bw == p.peak_bw && q.bw_factor == 1.0 && q.tsc_hz == p.tsc_hz, "numbers");
    MW_CHECK_INT(q.n_methods, 2);
    MW_CHECK_STR(q.methods[0].reason, p.methods[0].reason);
    MW_CHECK(q.methods[0].false_pos == 0.03125 && q.methods[0].false_neg == 1 &&
                 q.methods[0].threshold == 162.4375 && q.methods[0].cv == 0.0125,
             "method numbers");
    MW_CHECK_STR(q.methods[1].verdict, "unavailable");
    MW_CHECK_INT(q.methods[0].vd, MW_VERDICT_ACCURATE); /* parsed once, at load */
    MW_CHECK_INT(q.methods[1].vd, MW_VERDICT_UNAVAILABLE);
    /* numbers that need all 17 digits read back bit for bit (cJSON alone would print
     * 15 digits of a value that merely compares "almost equal") */
    {
        mw_profile r = p, s;
        r.lat_threshold_ns = 500.0 / 3.0 + 1e-13;
        r.peak_bw = 54.2e9 / 7.0;
        r.idle_latency_ns = 0.1 + 0.2;
        r.methods[0].threshold = r.lat_threshold_ns;
        MW_CHECK_INT(mw_profile_write(path, &r, NULL, NULL), 0);
        MW_CHECK_INT(mw_profile_load(path, 1, &s), 0);
        MW_CHECK(s.lat_threshold_ns == r.lat_threshold_ns && s.peak_bw == r.peak_bw &&
                     s.idle_latency_ns == r.idle_latency_ns &&
                     s.methods[0].threshold == r.methods[0].threshold,
                 "17-digit round trip: %.17g %.17g %.17g", s.lat_threshold_ns, s.peak_bw,
                 s.idle_latency_ns);
    }
    /* written again over itself: atomic replace, no temporary left */
    MW_CHECK_INT(mw_profile_write(path, &p, NULL, NULL), 0);
    char tmpname[600];
    snprintf(tmpname, sizeof tmpname, "%s.tmp.%ld", path, (long)getpid());
    MW_CHECK(access(tmpname, F_OK) != 0, "temporary file left behind");

    size_t len;
    char *good = slurp(path, &len);
    MW_CHECK(good != NULL, "read back");
    if (!good)
        return;

    /* another machine: foreign with the identity check, fine without */
    char *other = replace(good, p.identity, "cpu=Some Other CPU;fms=6/85/7;ucode=0x1;kernel=5.4;cpus=96;nodes=2;mem=384GiB");
    spit(bad, other, strlen(other));
    last_log[0] = 0;
    MW_CHECK_INT(mw_profile_load(bad, 1, &q), MW_ERR_FOREIGN);
    MW_CHECK(strstr(last_log, "another machine") && strstr(last_log, "Some Other CPU"), "log: %s", last_log);
    MW_CHECK_INT(mw_profile_load(bad, 0, &q), 0);
    free(other);

    static const struct {
        const char *from, *to;
        int want;
        const char *why;
    } cases[] = {
        {"\"memwatch-profile\"", "\"likwid-topology\"", MW_ERR_FOREIGN, "not a memwatch profile"},
        {"\"version\":\t1", "\"version\":\t2", MW_ERR_FOREIGN, "version 2"},
        {"\"version\":\t1", "\"version\":\t\"1\"", MW_ERR_CORRUPT, "version"},
        {"\"peak_bw\"", "\"peak_bandwidth\"", MW_ERR_CORRUPT, "missing number \"peak_bw\""},
        {"\"lat_method\":\t\"probe_lat\"", "\"lat_method\":\t7", MW_ERR_CORRUPT, "not a string"},
        {"\"lat_method\":\t\"probe_lat\"", "\"lat_method\":\t\"probe_lat_with_a_name_far_too_long_for_it\"", MW_ERR_CORRUPT, "longer"},
        {"\"idle_latency_ns\":\t141.25", "\"idle_latency_ns\":\t-1", MW_ERR_CORRUPT, "negative"},
        {"\"lat_threshold_ns\":\t162.4375", "\"lat_threshold_ns\":\t0", MW_ERR_CORRUPT, "no positive threshold"},
        {"\"methods\":\t[", "\"methods\":\t[3, ", MW_ERR_CORRUPT, "not an object"},
        {"\"identity\"", "\"who\"", MW_ERR_CORRUPT, "missing string \"identity\""},
        {"\"bw_factor\":\t1", "\"bw_factor\":\t1e999", MW_ERR_CORRUPT, "finite"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *t = replace(good, cases[i].from, cases[i].to);
        MW_CHECK(t != NULL, "case %zu: pattern %s not in the written profile", i, cases[i].from);
        if (!t)
            continue;
        spit(bad, t, strlen(t));
        free(t);
        last_log[0] = 0;
        int rc = mw_profile_load(bad, 0, &q);
        MW_CHECK(rc == cases[i].want, "case %zu (%s): rc %d (%s), expected %d", i, cases[i].why, rc,
                 mw_strerror(rc), cases[i].want);
        MW_CHECK(strstr(last_log, cases[i].why) != NULL, "case %zu: log \"%s\" lacks \"%s\"", i,
                 last_log, cases[i].why);
        MW_CHECK(q.lat_method[0] == 0 && q.n_methods == 0, "case %zu: nothing half-loaded", i);
    }

    /* not JSON, empty, a directory, a device, missing, too large */
    spit(bad, "\x89PNG\r\n\x1a\n", 8);
    MW_CHECK_INT(mw_profile_load(bad, 0, &q), MW_ERR_CORRUPT);
    spit(bad, "", 0);
    MW_CHECK_INT(mw_profile_load(bad, 0, &q), MW_ERR_CORRUPT);
    spit(bad, "[1,2,3]", 7);
    MW_CHECK_INT(mw_profile_load(bad, 0, &q), MW_ERR_CORRUPT);
    MW_CHECK_INT(mw_profile_load(tmpdir, 0, &q), MW_ERR_CORRUPT);
    MW_CHECK_INT(mw_profile_load("/dev/null", 0, &q), MW_ERR_CORRUPT);
    snprintf(bad, sizeof bad, "%s/none.json", tmpdir);
    MW_CHECK_INT(mw_profile_load(bad, 0, &q), -ENOENT);
    snprintf(bad, sizeof bad, "%s/big.json", tmpdir);
    int fd = open(bad, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    MW_CHECK(fd >= 0 && ftruncate(fd, 64 << 20) == 0, "sparse file");
    if (fd >= 0)
        close(fd);
    MW_CHECK_INT(mw_profile_load(bad, 0, &q), MW_ERR_CORRUPT);
    MW_CHECK_INT(mw_profile_load(NULL, 0, &q), -EINVAL);

    /* every truncation of a valid profile is refused, none crashes */
    snprintf(bad, sizeof bad, "%s/cut.json", tmpdir);
    unsigned refused = 0, tried = 0;
    size_t body = len;
    while (body && (good[body - 1] == '\n'))
        body--;
    for (size_t cut = 0; cut < body; cut += (cut < 200 ? 1 : 7)) {
        spit(bad, good, cut);
        int rc = mw_profile_load(bad, 0, &q);
        tried++;
        refused += rc == MW_ERR_CORRUPT;
    }
    MW_CHECK(refused == tried, "%u of %u truncations refused as corrupt", refused, tried);
    /* byte flips: any outcome but a crash; most are refused */
    uint64_t s = 12345;
    unsigned ok = 0, flips = 3000;
    char *m = malloc(len);
    for (unsigned i = 0; i < flips && m; i++) {
        memcpy(m, good, len);
        for (int k = 0; k < 3; k++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            m[(s >> 33) % len] = (char)(s >> 13);
        }
        spit(bad, m, len);
        int rc = mw_profile_load(bad, 0, &q);
        MW_CHECK(rc == 0 || rc == MW_ERR_CORRUPT || rc == MW_ERR_FOREIGN, "flip %u: rc %d", i, rc);
        ok += rc == 0;
    }
    free(m);
    printf("truncations refused %u/%u; byte-flipped files accepted %u/%u\n", refused, tried, ok, flips);
    free(good);
}

/* The snapshot memwatch record hands down: read back equal to what was
 * loaded; refused (and *out zeroed) for another profile's path, another
 * layout, every truncation, a count or string out of bounds; no byte flip
 * crashes the reader. */
static void test_snapshot(void)
{
    mw_profile p, q, r;
    sample_profile(&p);
    char json[512], snap[512], bad[512];
    snprintf(json, sizeof json, "%s/snap-profile.json", tmpdir);
    snprintf(snap, sizeof snap, "%s/snap.bin", tmpdir);
    snprintf(bad, sizeof bad, "%s/snap-bad.bin", tmpdir);
    MW_CHECK_INT(mw_profile_write(json, &p, NULL, NULL), 0);
    MW_CHECK_INT(mw_profile_load(json, 0, &q), 0);
    unlink(snap);
    MW_CHECK_INT(mw_profile_snapshot_write(snap, json, &q), 0);
    /* O_EXCL: a file that is there is not written over */
    MW_CHECK_INT(mw_profile_snapshot_write(snap, json, &q), -EEXIST);
    MW_CHECK_INT(mw_profile_snapshot_read(snap, json, &r), 0);
    MW_CHECK(memcmp(&q, &r, sizeof q) == 0, "the snapshot reads back as the loaded profile");
    MW_CHECK_STR(r.identity, p.identity);
    MW_CHECK_INT(r.n_methods, 2);
    /* another profile's snapshot, a missing one */
    MW_CHECK_INT(mw_profile_snapshot_read(snap, "/elsewhere/profile.json", &r), MW_ERR_FOREIGN);
    MW_CHECK(r.n_methods == 0 && r.identity[0] == 0, "nothing half-loaded");
    MW_CHECK_INT(mw_profile_snapshot_read(bad, json, &r), -ENOENT);
    char longp[1100];
    memset(longp, 'a', sizeof longp - 1);
    longp[0] = '/';
    longp[sizeof longp - 1] = 0;
    MW_CHECK_INT(mw_profile_snapshot_write(bad, longp, &q), -ENAMETOOLONG);
    MW_CHECK(access(bad, F_OK) != 0, "no file for a refused snapshot");

    size_t len;
    char *good = slurp(snap, &len);
    MW_CHECK(good != NULL && len > sizeof(mw_profile), "read back %zu bytes", len);
    if (!good)
        return;
    size_t head = len - sizeof(mw_profile);
    char *m = malloc(len + 1);
    /* every truncation, and one byte more */
    unsigned refused = 0, tried = 0;
    for (size_t cut = 0; cut < len; cut += cut < head + 64 ? 1 : 61) {
        spit(bad, good, cut);
        tried++;
        refused += mw_profile_snapshot_read(bad, json, &r) == MW_ERR_CORRUPT;
    }
    memcpy(m, good, len);
    m[len] = 0;
    spit(bad, m, len + 1);
    MW_CHECK_INT(mw_profile_snapshot_read(bad, json, &r), MW_ERR_CORRUPT);
    MW_CHECK(refused == tried, "%u of %u truncations refused as corrupt", refused, tried);
    /* another build's layout: the magic, the revision, a size */
    for (size_t at = 0; at < 24; at += 4) {
        memcpy(m, good, len);
        m[at] ^= 0x10;
        spit(bad, m, len);
        MW_CHECK_INT(mw_profile_snapshot_read(bad, json, &r), MW_ERR_FOREIGN);
    }
    /* a count past its array, a string without its end */
    static const size_t counts[] = {offsetof(mw_profile, n_methods), offsetof(mw_profile, n_mixes),
                                    offsetof(mw_profile, n_curve)};
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
        memcpy(m, good, len);
        unsigned big = 1000;
        memcpy(m + head + counts[i], &big, sizeof big);
        spit(bad, m, len);
        MW_CHECK_INT(mw_profile_snapshot_read(bad, json, &r), MW_ERR_CORRUPT);
        MW_CHECK(r.n_methods == 0, "case %zu: nothing half-loaded", i);
    }
    memcpy(m, good, len);
    memset(m + head + offsetof(mw_profile, methods) + offsetof(mw_profile_method, reason), 'x',
           sizeof p.methods[0].reason);
    spit(bad, m, len);
    MW_CHECK_INT(mw_profile_snapshot_read(bad, json, &r), MW_ERR_CORRUPT);
    memcpy(m, good, len);
    int vd = 99;
    memcpy(m + head + offsetof(mw_profile, methods) + offsetof(mw_profile_method, vd), &vd,
           sizeof vd);
    spit(bad, m, len);
    MW_CHECK_INT(mw_profile_snapshot_read(bad, json, &r), MW_ERR_CORRUPT);
    /* byte flips: any outcome but a crash */
    uint64_t s = 777;
    unsigned ok = 0, flips = 2000;
    for (unsigned i = 0; i < flips; i++) {
        memcpy(m, good, len);
        for (int k = 0; k < 3; k++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            m[(s >> 33) % len] = (char)(s >> 13);
        }
        spit(bad, m, len);
        int rc = mw_profile_snapshot_read(bad, json, &r);
        MW_CHECK(rc == 0 || rc == MW_ERR_CORRUPT || rc == MW_ERR_FOREIGN, "flip %u: rc %d", i, rc);
        if (rc == 0)
            MW_CHECK(r.n_methods <= MW_PROFILE_MAX_METHODS &&
                         memchr(r.identity, 0, sizeof r.identity),
                     "flip %u: accepted out of bounds", i);
        ok += rc == 0;
    }
    printf("snapshot: truncations refused %u/%u; byte-flipped files accepted %u/%u\n", refused,
           tried, ok, flips);
    free(m);
    free(good);
}

/* "mixes": written, read back, picked by read share and by name; a profile
 * without them (older) still reads; malformed ones are refused. */
static void test_mixes(void)
{
    mw_profile p, q;
    sample_profile(&p);
    char path[512];
    snprintf(path, sizeof path, "%s/mixes.json", tmpdir);
    /* an old profile: no "mixes" key at all */
    MW_CHECK_INT(mw_profile_write(path, &p, NULL, NULL), 0);
    MW_CHECK_INT(mw_profile_load(path, 1, &q), 0);
    MW_CHECK_INT(q.n_mixes, 0);
    MW_CHECK_INT(mw_profile_mix_pick(&q, 1.0, 0), -1);
    MW_CHECK_INT(mw_profile_mix_find(&q, "reads50"), -1);
    static const struct {
        const char *name;
        double share, th;
        int nt;
    } mx[] = {{"reads100", 1.0, 160.5, 0}, {"reads75", 0.75, 171.25, 0},
              {"reads50", 0.5, 190.0, 0}, {"nt50", 0.5, 180.0, 1}};
    p.n_mixes = 4;
    for (unsigned i = 0; i < 4; i++) {
        snprintf(p.mixes[i].name, sizeof p.mixes[i].name, "%s", mx[i].name);
        p.mixes[i].read_share = mx[i].share;
        p.mixes[i].threshold_ns = mx[i].th;
        p.mixes[i].nontemporal = mx[i].nt;
        p.mixes[i].peak_bw = 100e9 - 10e9 * i;
        p.mixes[i].peak_ns = 200 + i;
        p.mixes[i].saturated = i != 3;
    }
    MW_CHECK_INT(mw_profile_write(path, &p, NULL, NULL), 0);
    MW_CHECK_INT(mw_profile_load(path, 1, &q), 0);
    MW_CHECK_INT(q.n_mixes, 4);
    for (unsigned i = 0; i < 4 && i < q.n_mixes; i++) {
        MW_CHECK_STR(q.mixes[i].name, mx[i].name);
        MW_CHECK(q.mixes[i].read_share == mx[i].share && q.mixes[i].threshold_ns == mx[i].th &&
                     q.mixes[i].nontemporal == mx[i].nt && q.mixes[i].saturated == (i != 3) &&
                     q.mixes[i].peak_bw == 100e9 - 10e9 * i && q.mixes[i].peak_ns == 200 + i,
                 "mix %u read back", i);
    }
    /* the nearest read share, temporal or not; ties to the more reads */
    MW_CHECK_INT(mw_profile_mix_pick(&q, 1.0, 0), 0);
    MW_CHECK_INT(mw_profile_mix_pick(&q, 0.9, 0), 0);
    MW_CHECK_INT(mw_profile_mix_pick(&q, 0.85, 0), 1); /* 0.15 from 1.0, 0.10 from 0.75 */
    MW_CHECK_INT(mw_profile_mix_pick(&q, 0.8, 0), 1);
    MW_CHECK_INT(mw_profile_mix_pick(&q, 0.625, 0), 1); /* a tie: the more reads */
    MW_CHECK_INT(mw_profile_mix_pick(&q, 0.3, 0), 2);
    MW_CHECK_INT(mw_profile_mix_pick(&q, 0.3, 1), 3);
    MW_CHECK_INT(mw_profile_mix_find(&q, "reads50"), 2);
    MW_CHECK_INT(mw_profile_mix_find(&q, "50"), 2);
    MW_CHECK_INT(mw_profile_mix_find(&q, "nt"), 3);
    MW_CHECK_INT(mw_profile_mix_find(&q, "reads60"), -1);
    /* the curve that judges latency: MEMWATCH_MIX's, else the one nearest an
     * interval's measured read/write split, else none (the method's own,
     * reads100's, threshold) with the reason */
    char why[200];
    int k = mw_profile_mix_choose(&q, NULL, 50e6, 50e6, 0, why, sizeof why); /* 50 % reads */
    MW_CHECK_INT(k, 2);
    MW_CHECK(k == 2 && q.mixes[k].threshold_ns == 190.0, "50 %% reads: threshold %g, not reads50's",
             k >= 0 ? q.mixes[k].threshold_ns : 0);
    MW_CHECK_STR(why, "reads50: the nearest curve to the measured read share, 50 %");
    MW_CHECK_INT(mw_profile_mix_choose(&q, "", 75e6, 25e6, 0, why, sizeof why), 1);
    MW_CHECK_STR(why, "reads75: the nearest curve to the measured read share, 75 %");
    MW_CHECK_INT(mw_profile_mix_choose(&q, NULL, 1e9, 0, 0, why, sizeof why), 0);
    MW_CHECK_INT(mw_profile_mix_choose(&q, NULL, 0, 1e9, 0, why, sizeof why), 2); /* writes only */
    MW_CHECK_INT(mw_profile_mix_choose(&q, NULL, 50e6, 50e6, 1, why, sizeof why), 3); /* nt */
    MW_CHECK_STR(why, "nt50: the nearest curve to the measured read share, 50 %");
    /* MEMWATCH_MIX before a measured split */
    MW_CHECK_INT(mw_profile_mix_choose(&q, "reads50", 1e9, 0, 0, why, sizeof why), 2);
    MW_CHECK_STR(why, "reads50 (MEMWATCH_MIX)");
    MW_CHECK_INT(mw_profile_mix_choose(&q, "nt", 0, 0, 0, why, sizeof why), 3);
    MW_CHECK_STR(why, "nt50 (MEMWATCH_MIX)");
    MW_CHECK_INT(mw_profile_mix_choose(&q, "reads60", 50e6, 50e6, 0, why, sizeof why), -1);
    MW_CHECK_STR(why, "reads100: MEMWATCH_MIX=reads60 names a curve the profile lacks (memwatch "
                      "calibrate --mix)");
    /* no split measured (no byte counts, or nonsense): none, and why */
    MW_CHECK_INT(mw_profile_mix_choose(&q, NULL, 0, 0, 0, why, sizeof why), -1);
    MW_CHECK_STR(why, "reads100: no method in use measures an interval's read/write split "
                      "(MEMWATCH_MIX chooses another curve)");
    MW_CHECK_INT(mw_profile_mix_choose(&q, NULL, -1, 5e6, 0, why, sizeof why), -1);
    MW_CHECK_INT(mw_profile_mix_choose(&q, NULL, 50e6, 50e6, 0, NULL, 0), 2);
    {
        mw_profile r = q; /* a curve without a threshold is not used */
        r.mixes[2].threshold_ns = 0;
        MW_CHECK_INT(mw_profile_mix_choose(&r, "reads50", 0, 0, 0, why, sizeof why), -1);
        MW_CHECK_STR(why, "reads100: MEMWATCH_MIX=reads50 names a curve without a threshold (it "
                          "did not saturate)");
    }
    {
        mw_profile r = q; /* temporal curves only: none for non-temporal stores */
        r.n_mixes = 3;
        MW_CHECK_INT(mw_profile_mix_choose(&r, NULL, 50e6, 50e6, 1, why, sizeof why), -1);
        MW_CHECK_STR(why, "reads100: the profile has no non-temporal curve for the measured read "
                          "share, 50 %");
    }
    /* malformed mixes make the profile corrupt */
    size_t len;
    char *good = slurp(path, &len);
    MW_CHECK(good != NULL, "read %s", path);
    static const char *const breaks[][2] = {
        {"\"mixes\":\t[", "\"mixes\": 3, \"x\": ["},
        {"\"read_share\":\t0.75", "\"read_share\": 1.75"},
        {"\"read_share\":\t0.75", "\"read_share\": \"most\""},
        {"\"nontemporal\":\ttrue", "\"nontemporal\": 1"},
        {"\"threshold_ns\":\t190", "\"threshold_ns\": -190"},
        {"\"name\":\t\"reads75\"", "\"name\": 75"},
    };
    for (size_t i = 0; good && i < sizeof breaks / sizeof breaks[0]; i++) {
        char *b = replace(good, breaks[i][0], breaks[i][1]);
        MW_CHECK(b != NULL, "break %zu: '%s' not in the profile", i, breaks[i][0]);
        if (!b)
            continue;
        spit(path, b, strlen(b));
        MW_CHECK_INT(mw_profile_load(path, 1, &q), MW_ERR_CORRUPT);
        free(b);
    }
    free(good);
}

/* What the flag can claim: saturable, the band, the origin, the curve and
 * the note read back; an old profile has none of them (unknown); malformed
 * ones are refused. */
static void test_claims(void)
{
    mw_profile p, q;
    sample_profile(&p);
    char path[512];
    snprintf(path, sizeof path, "%s/claims.json", tmpdir);
    MW_CHECK_INT(mw_profile_write(path, &p, NULL, NULL), 0);
    MW_CHECK_INT(mw_profile_load(path, 1, &q), 0);
    MW_CHECK_INT(q.saturable, MW_SAT_UNKNOWN);
    MW_CHECK(q.band_hi_ns == 0 && q.n_curve == 0 && !q.threshold_note[0] && !q.from_shapes,
             "an old profile claims nothing");
    MW_CHECK(q.writes_threshold_ns == 0 && q.writes_band_hi_ns == 0,
             "an old profile has no threshold for loads that write");
    p.saturable = MW_SAT_YES;
    p.band_lo_ns = 150.25;
    p.band_hi_ns = 171.5;
    p.from_shapes = 1;
    p.n_curve = 3;
    p.curve[0].bw = 0, p.curve[0].ns = 120;
    p.curve[1].bw = 80e9, p.curve[1].ns = 130;
    p.curve[2].bw = 150e9, p.curve[2].ns = 190.5;
    snprintf(p.threshold_note, sizeof p.threshold_note, "probe_lat judged noisy \"x\"");
    p.writes_threshold_ns = 188.5;
    p.writes_band_lo_ns = 181.25;
    p.writes_band_hi_ns = 196.75;
    MW_CHECK_INT(mw_profile_write(path, &p, NULL, NULL), 0);
    MW_CHECK_INT(mw_profile_load(path, 1, &q), 0);
    MW_CHECK_INT(q.saturable, MW_SAT_YES);
    MW_CHECK(q.writes_threshold_ns == 188.5 && q.writes_band_lo_ns == 181.25 &&
                 q.writes_band_hi_ns == 196.75,
             "writes threshold %g, band %g..%g", q.writes_threshold_ns, q.writes_band_lo_ns,
             q.writes_band_hi_ns);
    MW_CHECK(q.band_lo_ns == 150.25 && q.band_hi_ns == 171.5, "band %g..%g", q.band_lo_ns,
             q.band_hi_ns);
    MW_CHECK_INT(q.from_shapes, 1);
    MW_CHECK_INT(q.n_curve, 3);
    MW_CHECK(q.curve[2].bw == 150e9 && q.curve[2].ns == 190.5, "curve");
    MW_CHECK_STR(q.threshold_note, p.threshold_note);
    p.saturable = MW_SAT_NO;
    MW_CHECK_INT(mw_profile_write(path, &p, NULL, NULL), 0);
    MW_CHECK_INT(mw_profile_load(path, 1, &q), 0);
    MW_CHECK_INT(q.saturable, MW_SAT_NO);
    size_t len;
    char *good = slurp(path, &len);
    MW_CHECK(good != NULL, "read back");
    static const struct {
        const char *from, *to;
    } bad[] = {
        {"\"saturable\":\tfalse", "\"saturable\":\t0"},
        {"\"threshold_band_ns\":\t[150.25, 171.5]", "\"threshold_band_ns\":\t[171.5, 150.25]"},
        {"\"threshold_band_ns\":\t[150.25, 171.5]", "\"threshold_band_ns\":\t[150.25]"},
        {"[80000000000, 130]", "[80000000000, 110]"}, /* latency falls */
        {"[80000000000, 130]", "[80000000000, \"130\"]"},
        {"\"threshold_note\":", "\"threshold_note\": 5, \"x\":"},
        {"\"writes_threshold_ns\":\t188.5", "\"writes_threshold_ns\":\t-1"},
        {"\"writes_threshold_ns\":\t188.5", "\"writes_threshold_ns\":\t\"188.5\""},
        {"\"writes_band_ns\":\t[181.25, 196.75]", "\"writes_band_ns\":\t[196.75, 181.25]"},
    };
    for (size_t i = 0; good && i < sizeof bad / sizeof *bad; i++) {
        char *b = replace(good, bad[i].from, bad[i].to);
        MW_CHECK(b != NULL, "case %zu: \"%s\" not in the written profile", i, bad[i].from);
        if (!b)
            continue;
        spit(path, b, strlen(b));
        MW_CHECK_INT(mw_profile_load(path, 1, &q), MW_ERR_CORRUPT);
        free(b);
    }
    free(good);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/mw-test-profile-XXXXXX");
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    mw_set_log(capture, NULL, MW_LOG_DEBUG);
    test_identity();
    test_default_path();
    test_round_trip_and_refusals();
    test_mixes();
    test_claims();
    test_snapshot();
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmpdir);
    return mw_test_done();
}
