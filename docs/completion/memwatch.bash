# bash completion for memwatch (installed as
# /usr/share/bash-completion/completions/memwatch)
_memwatch()
{
    local cur prev cmd
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD-1]}
    if [ "$COMP_CWORD" -eq 1 ]; then
        COMPREPLY=($(compgen -W "probe calibrate record report export prefetch monitor fleet --help --version" -- "$cur"))
        return
    fi
    cmd=${COMP_WORDS[1]}
    local i
    for ((i = 2; i < COMP_CWORD; i++)); do
        if [ "$cmd" = record ] && [ "${COMP_WORDS[i]}" = -- ]; then
            # the program and its arguments
            if [ $((i + 1)) -eq "$COMP_CWORD" ]; then
                COMPREPLY=($(compgen -c -- "$cur"))
            else
                COMPREPLY=($(compgen -f -- "$cur"))
            fi
            return
        fi
    done
    case "$cmd:$prev" in
    record:-o | record:--output | calibrate:--plot)
        COMPREPLY=($(compgen -d -- "$cur"))
        return ;;
    record:-m | record:--method)
        COMPREPLY=($(compgen -W "auto probe_lat none lmrl l1_miss_lat imc_cas ocr_dram amd_umc amd_df" -- "$cur"))
        return ;;
    *:--profile | *:--json | report:--db | report:-o | fleet:--html | fleet:--reference | \
    fleet:--write-reference)
        COMPREPLY=($(compgen -f -- "$cur"))
        return ;;
    export:-f | export:--format)
        COMPREPLY=($(compgen -W "pprof perfetto folded csv html" -- "$cur"))
        return ;;
    export:--table)
        COMPREPLY=($(compgen -W "intervals lines regions" -- "$cur"))
        return ;;
    export:--source)
        COMPREPLY=($(compgen -W "timer fault precise" -- "$cur"))
        return ;;
    export:-o | export:--output)
        COMPREPLY=($(compgen -f -- "$cur"))
        return ;;
    calibrate:--bench)
        COMPREPLY=($(compgen -W "triad sweep ladder loaded mlp all" -- "$cur"))
        return ;;
    calibrate:--isa)
        COMPREPLY=($(compgen -W "auto avx512 avx2 sse2 scalar" -- "$cur"))
        return ;;
    monitor:--listen | monitor:-i | monitor:--interval | monitor:--max-connections | \
    monitor:--max-per-ip | monitor:--http-timeout)
        return ;;
    record:-i | record:--interval | record:-F | record:--rate | record:-a | \
    record:--alloc-threshold | record:--threshold-ns | record:--duration | report:--top | report:--threshold | \
    report:--run | calibrate:--threads | calibrate:--repeats | calibrate:--duration)
        return ;;
    esac
    local opts=""
    case "$cmd" in
    probe) opts="--json --sysfs-root --proc-root --dev-root --help" ;;
    calibrate) opts="--quick --bench --threads --triad-size --repeats --isa --free-running
                     --max-delay --duration --ladder-max --mlp-chains --json --no-json --plot
                     --progress --no-progress --profile --no-validate --gpu --help" ;;
    record) opts="-o --output -i --interval -F --rate -m --method -a --alloc-threshold
                  --threshold-ns --profile --no-follow --group-readable -q --quiet
                  -v --verbose -p --pid --all --duration --external --help --" ;;
    report) opts="--db --json --top --by --sort --callers --callees --run --all-runs --precise-threshold --profile --debug-dir
                  --no-symbols --no-wait --group-readable -q --quiet --help" ;;
    export) opts="-f --format -o --output --flagged --source --table --region-root --top --rank
                  --host --pid --group-readable --help" ;;
    prefetch) opts="--show --off --on --restore --msr-dir --state --uarch --help" ;;
    monitor) opts="--listen -i --interval --profile --max-connections --max-per-ip --http-timeout
                   -v --verbose --help" ;;
    fleet) opts="--json --html --reference --write-reference --group -v --verbose --help" ;;
    esac
    if [[ "$cur" == -* ]]; then
        COMPREPLY=($(compgen -W "$opts" -- "$cur"))
    elif [ "$cmd" = report ]; then
        COMPREPLY=($(compgen -f -X '!*.mwr' -- "$cur") $(compgen -d -- "$cur"))
    elif [ "$cmd" = fleet ]; then
        COMPREPLY=($(compgen -f -X '!*.json' -- "$cur") $(compgen -d -- "$cur"))
    fi
}
complete -F _memwatch memwatch
