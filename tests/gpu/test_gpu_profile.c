/*
 * tests/gpu/test_gpu_profile.c (unit): the GPU profile reader the injected
 * library uses: the small JSON number lookup on good, tricky and broken
 * input, and mw_gpu_profile_threshold on files with and without the fields.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "memwatch/gpu.h"
#include "memwatch/memwatch.h"
#include "mw_test.h"

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
}

int main(void)
{
    double v = 0;
    MW_CHECK_INT(mw_gpu_json_number("{\"a\": 1, \"threshold_bw\": 1.5e12}", "threshold_bw", &v), 0);
    MW_CHECK_NEAR(v, 1.5e12, 1e-12);
    /* A key inside a string value must not match; nested objects must. */
    MW_CHECK_INT(mw_gpu_json_number("{\"x\": \"peak_bw\", \"d\": {\"peak_bw\" :\n 42}}", "peak_bw", &v), 0);
    MW_CHECK_NEAR(v, 42, 1e-12);
    /* Escaped quotes inside strings do not end them. */
    MW_CHECK_INT(mw_gpu_json_number("{\"s\": \"a\\\"peak_bw\\\"\", \"peak_bw\": 7}", "peak_bw", &v), 0);
    MW_CHECK_NEAR(v, 7, 1e-12);
    MW_CHECK_INT(mw_gpu_json_number("{\"peak_bwx\": 3}", "peak_bw", &v), MW_ERR_NODATA);
    MW_CHECK_INT(mw_gpu_json_number("{\"peak_bw\": \"fast\"}", "peak_bw", &v), MW_ERR_PARSE);
    MW_CHECK_INT(mw_gpu_json_number("{\"peak_bw\"", "peak_bw", &v), MW_ERR_NODATA);
    MW_CHECK_INT(mw_gpu_json_number("", "peak_bw", &v), MW_ERR_NODATA);

    char dir[] = "/tmp/mw-gpu-profile-XXXXXX", path[256];
    MW_CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    snprintf(path, sizeof path, "%s/gpu-profile.json", dir);
    double t = 0, p = 0;
    MW_CHECK_INT(mw_gpu_profile_threshold(path, &t, &p), MW_ERR_NODATA);
    put(path, "{\"schema\": \"memwatch-gpu-profile\", \"peak_bw\": 3.35e12, \"threshold_bw\": 1.45e12}");
    MW_CHECK_INT(mw_gpu_profile_threshold(path, &t, &p), 0);
    MW_CHECK_NEAR(t, 1.45e12, 1e-12);
    MW_CHECK_NEAR(p, 3.35e12, 1e-12);
    put(path, "{\"schema\": \"memwatch-profile\", \"peak_bw\": 1, \"threshold_bw\": 1}");
    MW_CHECK_INT(mw_gpu_profile_threshold(path, &t, &p), MW_ERR_FOREIGN);
    put(path, "{\"schema\": \"memwatch-gpu-profile\", \"peak_bw\": 3.35e12}");
    MW_CHECK_INT(mw_gpu_profile_threshold(path, &t, &p), MW_ERR_CORRUPT);
    put(path, "{\"schema\": \"memwatch-gpu-profile\", \"peak_bw\": 3e12, \"threshold_bw\": -1}");
    MW_CHECK_INT(mw_gpu_profile_threshold(path, &t, &p), MW_ERR_CORRUPT);
    unlink(path);

    setenv("MEMWATCH_GPU_PROFILE", "/x/y.json", 1);
    MW_CHECK_INT(mw_gpu_profile_path(path, sizeof path), 0);
    MW_CHECK_STR(path, "/x/y.json");
    unsetenv("MEMWATCH_GPU_PROFILE");
    setenv("XDG_DATA_HOME", "/d", 1);
    MW_CHECK_INT(mw_gpu_profile_path(path, sizeof path), 0);
    MW_CHECK_STR(path, "/d/memwatch/gpu-profile.json");
    MW_CHECK_INT(mw_gpu_profile_path(path, 8), MW_ERR_TOOBIG);
    rmdir(dir);
    return mw_test_done();
}
