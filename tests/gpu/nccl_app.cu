/*
 * tests/gpu/nccl_app.cu: one rank of a two-rank job, unaware of memwatch.
 * Each rank drives one GPU (device = rank) and alternates PHASES times a
 * streaming phase (stream_triad on three arrays of 256 MiB for about
 * SECONDS seconds) with an NCCL all-reduce (sum) of 64 Mi floats, whose
 * result it checks. The rank and the job's size come from the launcher's
 * variables (OMPI_COMM_WORLD_RANK/SIZE, PMI_RANK/SIZE, SLURM_PROCID/NTASKS);
 * the ranks meet through NCCL's unique id, which rank 0 writes to ID_FILE
 * and the others read. NVLink multicast (NVLS) is switched off.
 * Usage: nccl_app ID_FILE [phases] [seconds]
 */
#include <cerrno>
#include <cstring>
#include <unistd.h>
#include <nccl.h>

#define APP_NAME "nccl_app"
#include "app_common.cuh"

static int nccl_failed(ncclResult_t r, const char *what)
{
    if (r == ncclSuccess)
        return 0;
    fprintf(stderr, "%s: %s: %s\n", APP_NAME, what, ncclGetErrorString(r));
    return 1;
}
#define NK(x) do { if (nccl_failed((x), #x)) return 1; } while (0)

__global__ void fill(float *p, size_t n, float v)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        p[i] = v;
}

static int env_int(const char *const *names, int dflt)
{
    for (; *names; names++) {
        const char *v = getenv(*names);
        if (v && *v)
            return atoi(v);
    }
    return dflt;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: nccl_app ID_FILE [phases] [seconds]\n");
        return 2;
    }
    /* NVLink multicast stays off, whatever the environment says. */
    setenv("NCCL_NVLS_ENABLE", "0", 1);
    static const char *const rank_vars[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID",
                                            NULL};
    static const char *const size_vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS",
                                            NULL};
    int rank = env_int(rank_vars, 0), size = env_int(size_vars, 1);
    int phases = argc > 2 ? atoi(argv[2]) : 3;
    double seconds = argc > 3 ? atof(argv[3]) : 0.5;
    int ndev = 0;
    CK(cudaGetDeviceCount(&ndev));
    if (ndev < size) {
        printf("SKIP: nccl_app: %d ranks need %d CUDA devices, %d visible\n", size, size, ndev);
        return 77;
    }
    CK(cudaSetDevice(rank));

    ncclUniqueId id;
    const char *idf = argv[1];
    if (rank == 0) {
        NK(ncclGetUniqueId(&id));
        char tmp[4096];
        snprintf(tmp, sizeof tmp, "%s.tmp", idf);
        FILE *f = fopen(tmp, "wb");
        if (!f || fwrite(&id, sizeof id, 1, f) != 1 || fclose(f) != 0 || rename(tmp, idf) != 0) {
            fprintf(stderr, "nccl_app: cannot write %s: %s\n", idf, strerror(errno));
            return 1;
        }
    } else {
        double t0 = now();
        FILE *f;
        while (!(f = fopen(idf, "rb"))) {
            if (now() - t0 > 60) {
                fprintf(stderr, "nccl_app: rank %d: no id in %s after 60 s\n", rank, idf);
                return 1;
            }
            usleep(10000);
        }
        size_t got = fread(&id, sizeof id, 1, f);
        fclose(f);
        if (got != 1) {
            fprintf(stderr, "nccl_app: rank %d: short id file %s\n", rank, idf);
            return 1;
        }
    }
    ncclComm_t comm;
    NK(ncclCommInitRank(&comm, size, id, rank));
    cudaStream_t st;
    CK(cudaStreamCreate(&st));

    size_t n = (size_t)32 << 20, m = (size_t)64 << 20;
    double *a, *b, *c;
    float *r;
    if (triad_arrays(n, &a, &b, &c, 1))
        return 1;
    CK(cudaMalloc(&r, m * 4));
    int launches = 0, bad = 0;
    double t_stream = 0, t_reduce = 0;
    for (int p = 0; p < phases; p++) {
        double t0 = now();
        while (now() - t0 < seconds) {
            for (int i = 0; i < 20; i++)
                stream_triad<<<4096, 256, 0, st>>>(a, b, c, 3.0, n);
            launches += 20;
            CK(cudaStreamSynchronize(st));
        }
        double t1 = now();
        fill<<<1024, 256, 0, st>>>(r, m, (float)(rank + 1));
        NK(ncclAllReduce(r, r, m, ncclFloat, ncclSum, comm, st));
        CK(cudaStreamSynchronize(st));
        double t2 = now();
        float h[2];
        CK(cudaMemcpy(h, r, sizeof h, cudaMemcpyDeviceToHost));
        float want = (float)size * (size + 1) / 2;
        if (h[0] != want || h[1] != want)
            bad++;
        t_stream += t1 - t0;
        t_reduce += t2 - t1;
    }
    CK(cudaGetLastError());
    printf("rank=%d device=%d launches=%d stream_s=%.3f allreduce_s=%.3f allreduce_ok=%d\n", rank,
           rank, launches, t_stream, t_reduce, !bad);
    ncclCommDestroy(comm);
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);
    cudaFree(r);
    return bad ? 1 : 0;
}
