/*
 * preload/env.c: the environment variables libmemwatch.so's constructor
 * reads, found in one pass over environ (mwp_env_scan) instead of a getenv
 * per variable: some 45 getenv calls each walked the whole environment, in
 * every process of a recorded tree (docs/overhead.md).
 *
 * mwp_env.val[MWP_ENV_x] is what getenv("x") returned when the constructor
 * scanned (the first definition, as getenv finds it); mwp_env_drop forgets
 * a variable the constructor unsets. The counters library's own variables
 * (the probe's, the profile path's) are answered from the same table while
 * the constructor runs (mwp_env_answer), by getenv afterwards.
 * Threading: written by the constructor only.
 */
#include "env.h"

#include "base.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

extern char **environ;

MWP_HOT_DATA struct mwp_env_table mwp_env;

/* The names, as arrays (not pointers): no load-time relocations. */
#define MWP_ENV_NAME(id, name) name,
static const char env_names[MWP_ENV_COUNT][32] = {MWP_ENV_LIST(MWP_ENV_NAME)};
#define MWP_ENV_LEN(id, name) sizeof name - 1,
static const unsigned char env_len[MWP_ENV_COUNT] = {MWP_ENV_LIST(MWP_ENV_LEN)};

/* Which pairs of leading characters the names have, as bits of a 1024-bit
 * set: "ME" and the pairs of the other names' first two characters in
 * .first, the pairs after the "MEMWATCH_" prefix in .after. Most variables
 * of an environment are passed over after one test of .first; a CUDA image
 * or an HPC module system sets a hundred and more. */
struct env_keys {
    uint64_t first[16], after[16];
};

static unsigned env_key(const char *s)
{
    unsigned char a = (unsigned char)s[0], b = a ? (unsigned char)s[1] : 0;
    return (a * 31u + b) & 1023u;
}

static int env_key_in(const uint64_t *set, const char *s)
{
    unsigned k = env_key(s);
    return (int)(set[k >> 6] >> (k & 63) & 1);
}

static void env_keys_make(struct env_keys *k)
{
    memset(k, 0, sizeof *k);
    for (int i = 0; i < MWP_ENV_COUNT; i++) {
        const char *n = env_names[i];
        unsigned f = env_key(n), a = i < MWP_ENV_FIRST_OTHER ? env_key(n + 9) : 0;
        k->first[f >> 6] |= 1ull << (f & 63);
        if (i < MWP_ENV_FIRST_OTHER)
            k->after[a >> 6] |= 1ull << (a & 63);
    }
}

/* The index of the variable that s names, s being "NAME=value" (term '=')
 * or "NAME" (term 0); -1 for none. MEMWATCH_ names come first in the list:
 * their prefix is compared once, then the two letters after it (against
 * keys->after, where given). */
MWP_HOT static int env_match(const char *s, char term, const struct env_keys *keys)
{
    int lo = MWP_ENV_FIRST_OTHER, hi = MWP_ENV_COUNT;
    size_t skip = 0;
    if (s[0] == 'M' && s[1] == 'E' && s[2] == 'M' && s[3] == 'W' && s[4] == 'A' && s[5] == 'T' &&
        s[6] == 'C' && s[7] == 'H' && s[8] == '_') {
        if (keys && !env_key_in(keys->after, s + 9))
            return -1;
        lo = 0;
        hi = MWP_ENV_FIRST_OTHER;
        skip = 9;
    }
    const char *t = s + skip;
    for (int i = lo; i < hi; i++) {
        const char *n = env_names[i] + skip;
        if (n[0] != t[0] || n[1] != t[1])
            continue;
        size_t k = 1;
        while (n[k] && t[k] == n[k])
            k++;
        if (!n[k] && t[k] == term)
            return i;
    }
    return -1;
}

MWP_HOT void mwp_env_scan(void)
{
    memset(&mwp_env, 0, sizeof mwp_env);
    struct env_keys keys;
    env_keys_make(&keys);
    char **env = environ;
    for (size_t k = 0; env && env[k]; k++) {
        const char *e = env[k];
        if (!e[0] || !env_key_in(keys.first, e))
            continue;
        int i = env_match(e, '=', &keys);
        if (i >= 0 && !mwp_env.val[i]) /* getenv finds the first */
            mwp_env.val[i] = e + env_len[i] + 1;
    }
}

MWP_HOT static int env_index(const char *name)
{
    return env_match(name, 0, NULL);
}

void mwp_env_drop(const char *name)
{
    int i = env_index(name);
    if (i >= 0)
        mwp_env.val[i] = NULL;
}

/* For the counters library (mw_getenv, which calls this where it is
 * linked into libmemwatch.so) while the constructor runs: 1 with *value set
 * for a variable of the table, 0 (getenv's turn) otherwise. */
MWP_HOT_DATA static int env_answering;

MWP_HOT int mwp_env_answer(const char *name, const char **value)
{
    if (!env_answering)
        return 0;
    int i = env_index(name);
    if (i < 0)
        return 0;
    *value = mwp_env.val[i];
    return 1;
}

MWP_HOT void mwp_env_lookup_on(int on)
{
    env_answering = on;
}
