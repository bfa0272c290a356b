/*
 * report/ingest_decode.c: the data a timer sample's code was accessing,
 * from the instructions around the sampled one and the user registers
 * sampled with it (report/ingest.h; the rule and its measurements:
 * docs/data-addresses.md).
 *
 * The rule: a timer sample lands in a straight-line run of instructions
 * (from the branch before it to the branch after it). Every memory
 * operand of that run whose address registers are the same at the sample
 * as where it executes (no instruction in between writes them; in a loop,
 * the next iteration's where this one's were overwritten) gets its address
 * computed, and the sample is shared equally among the run's memory
 * operands: a loop's arrays get shares in proportion to their accesses.
 * Operands whose address cannot be computed keep their share unattributed.
 *
 * Owns: the per-address cache of runs (found by decoding the function from
 * its start), the evaluation of a run with a sample's registers.
 * May call: ing_code (modules), mw_symmod_code, mw_insn_decode, libc.
 */
#include "ingest.h"

#include <memwatch/insn.h>

#include <stdlib.h>

#define RUN_BEFORE 16      /* instructions of a run before the sampled one, at most */
#define RUN_AFTER 16       /* ... from it on */
#define RUN_BYTES 512
#define WALK_MAX (256u << 10) /* a function longer than this is not walked from its start */

typedef struct ing_dpc {
    uint64_t start;               /* rel address of the run's first instruction */
    uint16_t off[RUN_BEFORE + RUN_AFTER + 1]; /* instruction i: bytes [off[i], off[i+1]) */
    uint8_t n, at;                /* instructions; index of the sampled one */
    uint8_t loop;                 /* the run ends in a jump back to its start */
    uint8_t reads, writes, nt;    /* its memory operands' directions (ing_run_dirs) */
    mw_insn *ins;                 /* the n instructions, decoded once (n of them) */
} ing_dpc;

struct ing_decoder {
    ING_VEC(ing_dpc *) pcs;
    ing_hmap idx;                 /* (gmod index + 1, rel ip) -> index in pcs */
    uint8_t *walk;
    size_t walk_cap;
};

ing_decoder *ing_decoder_new(void) { return calloc(1, sizeof(ing_decoder)); }

void ing_decoder_free(ing_decoder *d)
{
    if (!d)
        return;
    for (size_t i = 0; i < d->pcs.n; i++) {
        free(d->pcs.v[i]->ins);
        free(d->pcs.v[i]);
    }
    ING_VEC_FREE(d->pcs);
    ing_hmap_free(&d->idx);
    free(d->walk);
    free(d);
}

/* The run around rel: decoded from the function's start (so that the
 * instruction boundaries before rel are the real ones), cut at branches. */
static void run_build(ing_decoder *d, mw_symmod *sm, uint64_t rel, ing_dpc *p)
{
    uint64_t fstart = rel;
    uint8_t probe[1];
    if (!mw_symmod_code(sm, rel, probe, 1, &fstart))
        return;
    if (fstart > rel || rel - fstart > WALK_MAX)
        fstart = rel;
    size_t need = (size_t)(rel - fstart) + 16 * RUN_AFTER;
    if (need > d->walk_cap) {
        uint8_t *n = realloc(d->walk, need);
        if (!n)
            return;
        d->walk = n;
        d->walk_cap = need;
    }
    size_t got = mw_symmod_code(sm, fstart, d->walk, need, NULL);
    /* boundaries up to rel: keep the last RUN_BEFORE after a branch */
    uint64_t bnd[RUN_BEFORE];
    unsigned nb = 0;
    size_t off = 0, target = (size_t)(rel - fstart);
    while (off < target) {
        mw_insn in;
        unsigned n = mw_insn_decode(d->walk + off, got - off, fstart + off, NULL, &in);
        if (!n)
            break;
        if (in.branch) {
            nb = 0;
        } else {
            if (nb == RUN_BEFORE) {
                memmove(bnd, bnd + 1, (RUN_BEFORE - 1) * sizeof *bnd);
                nb--;
            }
            bnd[nb++] = off;
        }
        off += n;
    }
    if (off != target)
        nb = 0; /* rel is not where the function's instructions are: from rel on */
    size_t s = nb ? (size_t)bnd[0] : target;
    p->start = fstart + s;
    p->at = (uint8_t)nb;
    unsigned k = 0;
    off = s;
    uint64_t back = 0; /* the run's last jump goes back to here (a loop's head) */
    while (k < RUN_BEFORE + RUN_AFTER && off < got && off - s < RUN_BYTES) {
        mw_insn in;
        unsigned n = mw_insn_decode(d->walk + off, got - off, fstart + off, NULL, &in);
        if (!n || off + n - s > RUN_BYTES)
            break;
        p->off[k++] = (uint16_t)(off - s);
        off += n;
        if (k > p->at && (in.branch || k - p->at >= RUN_AFTER)) {
            if (in.has_target && in.target >= fstart + s && in.target <= rel)
                back = in.target;
            break;
        }
    }
    if (k <= p->at) { /* the sampled instruction did not decode */
        p->n = 0;
        return;
    }
    /* A loop: the run begins at its head (the instructions before it run
     * once, not with the loop's) */
    unsigned j = 0;
    if (back) {
        while (j < p->at && fstart + s + p->off[j] != back)
            j++;
        if (fstart + s + p->off[j] == back) {
            p->loop = 1;
            size_t cut = p->off[j];
            for (unsigned i = 0; i + j < k; i++)
                p->off[i] = (uint16_t)(p->off[i + j] - cut);
            k -= j;
            p->at = (uint8_t)(p->at - j);
            s += cut;
            p->start = fstart + s;
        }
    }
    p->off[k] = (uint16_t)(off - s);
    if (!(p->ins = calloc(k, sizeof *p->ins)))
        return;
    for (unsigned i = 0; i < k; i++) {
        mw_insn *in = &p->ins[i];
        if (!mw_insn_decode(d->walk + s + p->off[i], (size_t)(p->off[i + 1] - p->off[i]),
                            fstart + s + p->off[i], NULL, in)) {
            free(p->ins);
            p->ins = NULL;
            return;
        }
        if (in->kind != MW_INSN_NO_MEM) {
            p->reads += in->mem_reads;
            p->writes += in->mem_writes;
            p->nt += in->nontemporal ? in->mem_writes : 0;
        }
    }
    p->n = (uint8_t)k;
}

static const ing_dpc *dpc_get(ing_decoder *d, ing_gmod *g, size_t gi, uint64_t rel)
{
    int64_t *hit = ing_hmap_get(&d->idx, gi + 1, rel);
    if (hit)
        return d->pcs.v[*hit];
    ing_dpc *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    if (g->sm)
        run_build(d, g->sm, rel, p);
    if (ING_VEC_PUSH(d->pcs, p)) {
        free(p);
        return NULL;
    }
    ing_hmap_put(&d->idx, gi + 1, rel, (int64_t)d->pcs.n - 1);
    return p;
}

/* The run of timer sample x, where it can be decoded as ing_decode does;
 * NULL where not (*err set on out of memory) */
static const ing_dpc *sample_run(ing_file *f, const ing_smp *x, const ing_pmod **pm_out, int *err)
{
    ing_decoder *d = f->code->dec;
    *err = 0;
    if (!d || !x->regs || !mw_insn_available(NULL))
        return NULL;
    const ing_pmod *pm = ing_code_find(f->code, x->ip);
    if (!pm || pm->is_stack)
        return NULL;
    const ing_dpc *p = dpc_get(d, &f->code->gmods.v[pm->gi], pm->gi, x->ip - pm->base);
    if (!p)
        *err = -ENOMEM;
    *pm_out = pm;
    return p && p->n ? p : NULL;
}

int ing_run_dirs(ing_file *f, const ing_smp *x, unsigned *reads, unsigned *writes, unsigned *nt)
{
    const ing_pmod *pm;
    int err;
    const ing_dpc *p = sample_run(f, x, &pm, &err);
    *reads = p ? p->reads : 0;
    *writes = p ? p->writes : 0;
    *nt = p ? p->nt : 0;
    return err;
}

int ing_decode(ing_file *f, const ing_smp *x, uint64_t fs_base, ing_decoded *out)
{
    memset(out, 0, sizeof *out);
    const ing_attr *a = &f->attrs.v[x->attr_idx];
    const ing_pmod *pm;
    int err;
    const ing_dpc *p = sample_run(f, x, &pm, &err);
    if (!p)
        return err;
    mw_insn_regs r;
    mw_insn_regs_from(&r, a->fmt.regs_user_mask, x->regs, x->regs_nr);
    if (fs_base) {
        r.have_fs_base = 1;
        r.fs_base = fs_base;
    }
    uint64_t base = pm->base + p->start; /* runtime address of the run */
    const mw_insn *in = p->ins;
    out->how = ING_ADDR_NOMEM;
    for (unsigned i = 0; i < p->n; i++) {
        if (in[i].kind == MW_INSN_NO_MEM)
            continue;
        uint64_t addr = 0;
        int kind = mw_insn_address(&in[i], base + p->off[i], &r, &addr);
        out->nmem++;
        /* the registers written between the operand's execution and the
         * sample: before the sampled one, from it on (its own writes
         * included); after, from the sampled one to it */
        uint32_t w = 0;
        unsigned lo = i < p->at ? i : p->at, hi = i < p->at ? p->at : i;
        for (unsigned k = lo; k < hi; k++)
            w |= in[k].writes;
        int ok = kind == MW_INSN_MEM && !(in[i].addr_regs & w);
        if (!ok && kind == MW_INSN_MEM && i < p->at && p->loop) {
            /* the next iteration's: from the sampled one to the run's end,
             * then from its start to the operand */
            w = 0;
            for (unsigned k = p->at; k < p->n; k++)
                w |= in[k].writes;
            for (unsigned k = 0; k < i; k++)
                w |= in[k].writes;
            ok = !(in[i].addr_regs & w);
        }
        if (ok && out->n < ING_DEC_MAX) {
            out->acc[out->n].addr = addr;
            out->acc[out->n].write = in[i].write;
            out->n++;
        }
    }
    if (out->nmem)
        out->how = out->n ? ING_ADDR_DECODED : ING_ADDR_UNKNOWN;
    return 0;
}
