/*
 * preload/cjson_dl.c: cJSON for libmemwatch.so, loaded on first use.
 *
 * Owns: the seven cJSON functions the machine-profile reader
 * (counters/profile.c) calls, defined here (hidden: the version script
 * exports none of them) so that libmemwatch.so does not name libcjson.so.1
 * as a dependency. A dependency is mapped and relocated in every profiled
 * process, about 35 µs of each process's start on the development VM
 * (docs/overhead.md), while only a process that finds a machine profile to
 * read needs cJSON, on its interval thread. That thread loads it here with
 * dlopen the first time.
 * Threading: pthread_once; the functions are then plain calls.
 * If libcjson.so.1 cannot be loaded, parsing yields NULL (the reader then
 * reports the profile unreadable) and the reason goes to the META and to
 * stderr once.
 */
#include "util.h"
#include "writer.h"

#include <cjson/cJSON.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

static struct {
    void (*del)(cJSON *);
    cJSON *(*get)(const cJSON *, const char *);
    cJSON_bool (*is_array)(const cJSON *);
    cJSON_bool (*is_number)(const cJSON *);
    cJSON_bool (*is_object)(const cJSON *);
    cJSON_bool (*is_string)(const cJSON *);
    cJSON *(*parse)(const char *, size_t);
} cj;
static pthread_once_t cj_once = PTHREAD_ONCE_INIT;

static void cj_load(void)
{
    void *h = dlopen("libcjson.so.1", RTLD_NOW | RTLD_LOCAL);
    const char *err = h ? NULL : dlerror();
    if (h) {
        *(void **)&cj.del = dlsym(h, "cJSON_Delete");
        *(void **)&cj.get = dlsym(h, "cJSON_GetObjectItemCaseSensitive");
        *(void **)&cj.is_array = dlsym(h, "cJSON_IsArray");
        *(void **)&cj.is_number = dlsym(h, "cJSON_IsNumber");
        *(void **)&cj.is_object = dlsym(h, "cJSON_IsObject");
        *(void **)&cj.is_string = dlsym(h, "cJSON_IsString");
        *(void **)&cj.parse = dlsym(h, "cJSON_ParseWithLength");
        if (!cj.del || !cj.get || !cj.is_array || !cj.is_number || !cj.is_object || !cj.is_string ||
            !cj.parse) {
            cj.parse = NULL;
            err = "a cJSON function is missing from it";
        }
    }
    if (err) {
        char why[300];
        snprintf(why, sizeof why, "libcjson.so.1 cannot be loaded (%s): no machine profile is read",
                 err);
        mwp_meta_note(MW_META_PROFILE_READER, why);
        mwp_say(1, why, NULL, NULL);
    }
}

cJSON *cJSON_ParseWithLength(const char *value, size_t len)
{
    pthread_once(&cj_once, cj_load);
    return cj.parse ? cj.parse(value, len) : NULL;
}

/* The others are only reached with a tree cJSON_ParseWithLength returned,
 * so cJSON is loaded by then. */
void cJSON_Delete(cJSON *item)
{
    if (item)
        cj.del(item);
}

cJSON *cJSON_GetObjectItemCaseSensitive(const cJSON *const object, const char *const string)
{
    return object ? cj.get(object, string) : NULL;
}

cJSON_bool cJSON_IsArray(const cJSON *const item)
{
    return item && cj.is_array(item);
}

cJSON_bool cJSON_IsNumber(const cJSON *const item)
{
    return item && cj.is_number(item);
}

cJSON_bool cJSON_IsObject(const cJSON *const item)
{
    return item && cj.is_object(item);
}

cJSON_bool cJSON_IsString(const cJSON *const item)
{
    return item && cj.is_string(item);
}
