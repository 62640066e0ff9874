#!/usr/bin/env bash
# Every experiment behind docs/reproduction.md, with fixed seeds. Each `dprm evaluate`
# writes its tables, figures and report.html under out/reproduction/NAME; a rerun
# resumes (finished runs are skipped). Then `python benchmarks/reproduction_tables.py`
# prints the tables of docs/reproduction.md from those directories.
#
# Usage: bash benchmarks/reproduce.sh [NAME ...]   (default: all; run from the project root)
# Time on this 2-core machine: about an hour in all (mammals-clired needs python-clired).
set -euo pipefail

DPRM=${DPRM:-.venv/bin/dprm}
DATA=${DATA:-../shared/data}
OUT=${OUT:-out/reproduction}
JOBS=${JOBS:-2}
TREES=alt-expm,alt-mcmc,mcmc-tree-pair
# The tree papers' settings (issue 28: the tree miners' defaults are dprm's measured best; --variant paper
# gives the paper-era ones, docs/reproduction.md).
PAPER="-p variant=paper"
mkdir -p "$OUT"

evaluate() {  # evaluate NAME DATASET [options...]
    local name=$1 dataset=$2
    shift 2
    "$DPRM" evaluate "$DATA/$dataset/left.csv" "$DATA/$dataset/right.csv" --jobs "$JOBS" --out "$OUT/$name" "$@"
}

run() {
    case $1 in
    # The tree paper's protocol on MAMMAL: 10 runs at ε = 1 and 0.1, 100 at 0.01.
    mammals-trees) evaluate mammals-trees mammals --algorithms $TREES --budgets 1x10,0.1x10,0.01x100 --seed 1 $PAPER ;;
    # The paper's variants and dprm's improvements switched off, at ε = 1.
    mammals-alt-regular) evaluate mammals-alt-regular mammals --algorithms alt-expm,alt-mcmc --budgets 1x10,0.1x10 \
        --seed 2 -p init_trials=1 -p alternations=4 $PAPER ;;
    mammals-pair-balanced) evaluate mammals-pair-balanced mammals --algorithms mcmc-tree-pair --budgets 1x10,0.1x10 \
        --seed 3 -p omega=0.5 $PAPER ;;
    mammals-pair-paper-score) evaluate mammals-pair-paper-score mammals --algorithms mcmc-tree-pair --budgets 1x10 \
        --seed 4 -p pair_score=paper $PAPER ;;
    mammals-paper-counts) evaluate mammals-paper-counts mammals --algorithms $TREES --budgets 1x10 \
        --seed 5 -p counts=paper -p size_share=0 $PAPER ;;
    # The Serenade paper's protocol on MAMMAL and RightW (rwas, answers categorical).
    mammals-greedy) evaluate mammals-greedy mammals --algorithms serenade-es,serenade-cs,serenade-es-nosens,reremi,cartwheels \
        --budgets 1x10,0.1x10 --seed 6 ;;
    rwas-greedy) evaluate rwas-greedy rwas --types benchmarks/rwas-types.json \
        --algorithms serenade-es,serenade-cs,serenade-es-nosens,reremi --budgets 1x10,0.1x10 --seed 7 ;;
    rwas-trees) evaluate rwas-trees rwas --types benchmarks/rwas-types.json --algorithms $TREES --budgets 1x10 --seed 8 $PAPER ;;
    # spi and nmes1988 stand in for NPAS and the medical data.
    spi-trees) evaluate spi-trees spi --algorithms $TREES --budgets 1x10 --seed 9 $PAPER ;;
    nmes1988-trees) evaluate nmes1988-trees nmes1988 --algorithms $TREES --budgets 1x10 --seed 10 $PAPER ;;
    # Scalability: make-planted data at the CMS-2-k sizes (7,200·k rows, k = 1, 2, 4, 8, 16).
    scalability)
        for k in 1 2 4 8 16; do
            local rows=$((7200 * k)) dir="$OUT/planted-$((7200 * k))"
            [ -f "$dir/data/left.csv" ] || "$DPRM" datasets make-planted "$dir/data" --rows "$rows" --seed 11 \
                --left-boolean 452 --right-numeric 152 --planted 5 > /dev/null
            "$DPRM" evaluate "$dir/data/left.csv" "$dir/data/right.csv" --types "$dir/data/types.json" \
                --algorithms $TREES --budgets 1x3 --seed 12 $PAPER --jobs 1 --out "$dir/experiment" --no-reports
        done
        "$DPRM" report "$OUT"/planted-*/experiment --output "$OUT/scalability.html" ;;
    # The non-private baselines through python-clired (pip install 'dprm[baselines]'); ReReMi is stopped
    # after 25 minutes and returns what it has finished.
    mammals-clired) evaluate mammals-clired mammals --algorithms clired-splitt,clired-layeredt,clired-reremi \
        --budgets 1x1 --seed 13 --timeout 1500 ;;
    *) echo "unknown experiment: $1" >&2; exit 2 ;;
    esac
}

ALL="mammals-trees mammals-greedy rwas-greedy mammals-alt-regular mammals-pair-balanced mammals-pair-paper-score mammals-paper-counts
     rwas-trees spi-trees nmes1988-trees scalability mammals-clired"
for name in ${@:-$ALL}; do
    echo "== $name"
    run "$name"
done
