#!/usr/bin/env bash
# The META keys are one list, MW_META_KEYS in include/memwatch/meta_keys.h.
# Fails where:
#   1. a writer names a key the list lacks: a "key=" string literal (at a
#      literal's start or after "\n") in preload/, gpu/, cli/cmd_record.c,
#      cli/neighbours.c or cli/attach.c; the files that write through the
#      names (all of them but cli/attach.c) may hold no such literal at all,
#      nor pass one to mwp_s_kv, mwp_s_kvu or mwp_meta_note_kv;
#   2. a row is written by no source (its MW_META_<ID> nowhere in the
#      writers, nor its "key=" in cli/attach.c);
#   3. a key of the list is not documented: docs/raw-format.md (docs/gpu.md
#      for gpu.*) names it as `key` or `key=...`;
#   4. a reader in report/ names a key the list lacks: in SQL (key = 'k',
#      key IN ('k', ...)), in C (ing_db_meta_value or meta_value with "k",
#      memmem and the like with "k="); other writers' spellings the report
#      also takes are listed below;
#   5. docs/architecture.md's "Adding a META key" shows code that is not in
#      the file its block names.
# MW_META_SOURCE_DIR (else MW_SOURCE_DIR) is the tree checked.
set -u
S=${MW_META_SOURCE_DIR:-${MW_SOURCE_DIR:?}}
LIST=$S/include/memwatch/meta_keys.h
bad=0
fail() { echo "FAIL: $*"; bad=1; }

# not META, though written or read as "key=" text: memwatch record's status
# file (preload/status.c writes it, cli/cmd_record.c reads it) and a message
NOT_META="errno time_ns file kernel.perf_event_paranoid"
# other writers' spellings that report/ingest.c takes for pid, host, exe,
# cmdline, rank and start
ALIASES="hostname program argv command mpi.rank mpi_rank start_ns t_start"

rows=$(perl -0777 -ne 's{/\*.*?\*/}{ }gs; print "$1 $2\n" while /\bX\(([A-Z0-9_]+), "([a-z0-9_.]+)",/g' "$LIST")
[ "$(echo "$rows" | wc -l)" -ge 80 ] || { echo "FAIL: only $(echo "$rows" | wc -l) rows in $LIST"; exit 1; }
keys=$(echo "$rows" | awk '{print $2}')
dup=$(echo "$keys" | sort | uniq -d)
[ -z "$dup" ] || fail "keys listed twice: $dup"
inlist() { echo "$keys" | grep -qxF -- "$1"; }
member() { local w=$1; shift; for x in "$@"; do [ "$x" = "$w" ] && return 0; done; return 1; }

# The "key=" literals of a C file: comments removed, adjacent literals
# joined; "FILE KEY" lines.
key_literals() {
    perl -0777 -ne '
        s{/\*.*?\*/}{ }gs; s{//[^\n]*}{}g;
        s{"\s*\n\s*"}{}g;
        while (/"((?:[^"\\\n]|\\.)*)"/g) {
            my $l = $1;
            while ($l =~ /(?:^|\\n)([a-z][a-z0-9_]*(?:\.[a-z0-9_]+)*)=/g) { print "$ARGV $1\n"; }
        }' "$1"
}

named=$(ls "$S"/preload/*.c "$S"/gpu/*.c; echo "$S/cli/cmd_record.c"; echo "$S/cli/neighbours.c")
writers="$named $S/cli/attach.c"

# 1. writers
for f in $writers; do
    [ -f "$f" ] || continue
    while read -r file key; do
        [ -n "$key" ] || continue
        member "$key" $NOT_META && continue
        if ! inlist "$key"; then
            fail "${file#$S/} writes META key '$key', which include/memwatch/meta_keys.h lacks"
        elif [ "$file" != "$S/cli/attach.c" ]; then
            fail "${file#$S/} writes \"$key=\" as a literal: write it through MW_META_$(echo "$rows" | awk -v k="$key" '$2==k {print $1}')"
        fi
    done < <(key_literals "$f")
done
for f in "$S"/preload/*.c; do
    [ "$(basename "$f")" = status.c ] && continue # the status file's keys, not META
    grep -nE '(mwp_s_kvu?|mwp_meta_note_kv)\([^,]*,? *"' "$f" | grep -vE 'mwp_meta_note_kv\(const' |
        while IFS= read -r l; do echo "FAIL: ${f#$S/}:$l: a META key as a literal (use mwp_s_meta, mwp_s_metau, mwp_meta_note)"; done |
        grep . && bad=1
done

# 2. every row written somewhere
all_writers=$(cat $writers 2>/dev/null)
attach_keys=$(key_literals "$S/cli/attach.c" 2>/dev/null | awk '{print $2}')
while read -r id key; do
    echo "$all_writers" | grep -qw "MW_META_$id" && continue
    echo "$attach_keys" | grep -qxF -- "$key" && continue
    fail "row $id (\"$key\") is written by no source"
done <<< "$rows"

# 3. documented
for key in $keys; do
    case $key in gpu.*) doc=$S/docs/gpu.md ;; *) doc=$S/docs/raw-format.md ;; esac
    grep -qE "\`$(echo "$key" | sed 's/\./\\./g')[\`=]" "$doc" ||
        fail "META key '$key' is not documented in ${doc#$S/}"
done

# 4. readers
for f in "$S"/report/*.c; do
    perl -0777 -ne '
        s{/\*.*?\*/}{ }gs; s{"\s*\n\s*"}{}g;
        while (/\bkey\s*=\s*\x27([a-z0-9_.]+)\x27/g) { print "$1\n"; }
        while (/\bkey\s+IN\s*\(([^)]*)\)/gi) { my $x = $1; while ($x =~ /\x27([a-z0-9_.]+)\x27/g) { print "$1\n"; } }
        while (/\bmeta_value\([^;]*?,\s*"([a-z0-9_.]+)"/g) { print "$1\n"; }' "$f" |
        sort -u | while read -r key; do
            inlist "$key" || member "$key" $ALIASES ||
                echo "FAIL: ${f#$S/} reads META key '$key', which include/memwatch/meta_keys.h lacks"
        done | grep . && bad=1
    perl -0777 -ne '
        s{/\*.*?\*/}{ }gs; s{"\s*\n\s*"}{}g;
        while (/\b(?:memmem|strstr|strncmp|memcmp)\([^;]*?"\\?n?([a-z][a-z0-9_]*(?:\.[a-z0-9_]+)*)="/g) { print "$1\n"; }' "$f" |
        sort -u | while read -r key; do
            inlist "$key" || member "$key" $NOT_META $ALIASES ||
                echo "FAIL: ${f#$S/} reads META key '$key' (\"$key=\"), which include/memwatch/meta_keys.h lacks"
        done | grep . && bad=1
done

# 5. the worked example: each ```c block of the section opens with a comment
# naming a file of the tree; its other lines are in that file
sec=$(awk '/^## Adding a META key/ {p=1; next} p && /^## / {exit} p' "$S/docs/architecture.md")
[ -n "$sec" ] || fail "docs/architecture.md has no section \"Adding a META key\""
ex=$(echo "$sec" | perl -ne '
    if (/^```c/) { $p = 1; $f = ""; next }
    if ($p && /^```/) { $p = 0; next }
    next unless $p;
    chomp;
    if ($f eq "") { ($f) = m{^\s*/\* ([^\s,]+)}; $f = "?" unless defined $f; print "BLOCK\t$f\n"; next }
    s/\s*\\?\s*$//; s/^\s+//;
    print "LINE\t$f\t$_\n" unless $_ eq "" || $_ eq "...";')
nblk=$(echo "$ex" | grep -c '^BLOCK')
[ "$nblk" -ge 2 ] || fail "docs/architecture.md's \"Adding a META key\" shows $nblk code blocks (a row and its code)"
while IFS=$'\t' read -r kind file line; do
    [ -n "$kind" ] || continue
    [ -f "$S/$file" ] || { fail "an example block of docs/architecture.md names no file of the tree: $file"; continue; }
    [ "$kind" = LINE ] || continue
    grep -qF -- "$line" "$S/$file" || fail "docs/architecture.md shows a line $file lacks: $line"
done <<< "$ex"

[ $bad = 0 ] || exit 1
echo "PASS: $(echo "$keys" | wc -w) keys, every writer's and reader's key listed, every key documented"
