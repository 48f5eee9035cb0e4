# bash completion for btfslim(1)                            -*- shell-script -*-
#
# Installed as bash-completion/completions/btfslim, where bash-completion loads it on first use; it needs
# nothing from bash-completion, so it can also be sourced on its own.
#
# A new command: add it to _btfslim_commands, its options to _btfslim_options, and the options that take
# a value to _btfslim_value. The cli tests (tests/e2e/test_cli.cc) fail until every option of
# `btfslim __options` is offered here.

_btfslim_commands="dump measure check minimize diff dedup budget help"

_btfslim_kind_names="int ptr array struct union enum fwd typedef volatile const restrict func func_proto var
datasec float decl_tag type_tag enum64"

# The options of COMMAND ("" for those before any command).
_btfslim_options() {
    case $1 in
        '') echo "--help -h --version -V" ;;
        dump) echo "--base -B --format -f --id --name --kind --help -h" ;;
        measure) echo "--base -B --format -f --by --sort --top -n --all --closure --kind --name --type --without
                       --modules --kernel-model --resident-base --svg --help -h" ;;
        check) echo "--btf --base -B --format -f --failures-only --strict --allow-missing --attach-target --no-attach --optional --modules --help -h" ;;
        minimize) echo "--btf --base -B --split-base --output -o --keep --explain --no-verify --elf --skip-poisoned
                        --jobs -j --shard --kernel --btf-out --modules --keep-for-modules --family --attach-target --help -h" ;;
        diff) echo "--base -B --old-base --new-base --by --format -f --top -n --verbose -v --help -h" ;;
        dedup) echo "--base -B --output -o --check --format -f --top -n --help -h" ;;
        budget) echo "--config -c --format -f --help -h" ;;
        help) echo "--help -h" ;;
    esac
    # What every command that reads inputs shares: how strictly, bpftool's name for -B, and no progress line.
    case $1 in
        dump | measure | check | minimize | diff | dedup) echo "--base-btf --strict-input --quiet -q" ;;
        budget) echo "--strict-input --quiet -q" ;;
    esac
}

# Each helper below sets COMPREPLY for $cur (names may hold spaces, hence mapfile) in this shell, so that
# compopt applies to this completion.
_btfslim_words() {
    mapfile -t COMPREPLY < <(compgen -W "$1" -- "$cur")
}

# Files (and directories to walk into).
_btfslim_files() {
    compopt -o filenames 2>/dev/null
    mapfile -t COMPREPLY < <(compgen -f -- "$cur")
}

# Directories only.
_btfslim_dirs() {
    compopt -o filenames 2>/dev/null
    mapfile -t COMPREPLY < <(compgen -d -- "$cur")
}

# BTF to read: a file, or the running kernel's BTF by name (vmlinux, a module under /sys/kernel/btf).
_btfslim_btf_inputs() {
    _btfslim_files
    local f names=vmlinux
    for f in /sys/kernel/btf/*; do
        [[ -e $f && ${f##*/} != vmlinux ]] && names+=" ${f##*/}"
    done
    mapfile -t -O "${#COMPREPLY[@]}" COMPREPLY < <(compgen -W "$names" -- "$cur")
}

# BPF objects: *.o files, and directories to walk into.
_btfslim_objects() {
    compopt -o filenames 2>/dev/null
    mapfile -t COMPREPLY < <(compgen -f -X '!*.o' -- "$cur"; compgen -d -- "$cur")
}

# The last item of a comma-separated list of kinds.
_btfslim_kinds() {
    local prefix=
    [[ $cur == *,* ]] && prefix=${cur%,*},
    compopt -o nospace 2>/dev/null
    mapfile -t COMPREPLY < <(compgen -P "$prefix" -W "$_btfslim_kind_names" -- "${cur##*,}")
}

# The values of COMMAND's option OPTION; status 1 when OPTION takes no value.
_btfslim_value() {
    case $1:$2 in
        dump:--format | dump:-f) _btfslim_words "raw json c" ;;
        measure:--format | measure:-f) _btfslim_words "table csv json" ;;
        check:--format | check:-f) _btfslim_words "table json github junit" ;;
        diff:--format | diff:-f) _btfslim_words "table csv json" ;;
        diff:--by) _btfslim_words "type member kind" ;;
        diff:--top | diff:-n) ;;
        dedup:--format | dedup:-f) _btfslim_words "table json" ;;
        budget:--format | budget:-f) _btfslim_words "table json junit github" ;;
        budget:--config | budget:-c) compopt -o filenames 2>/dev/null
                                     mapfile -t COMPREPLY < <(compgen -f -X '!*.toml' -- "$cur"; compgen -d -- "$cur") ;;
        measure:--by) _btfslim_words "default kind type prefix" ;;
        measure:--sort) _btfslim_words "own retained" ;;
        measure:--kernel-model) _btfslim_words "builtin module" ;;
        *:--kind | measure:--without) _btfslim_kinds ;;
        *:--base | *:-B | measure:--resident-base | diff:--old-base | diff:--new-base) _btfslim_btf_inputs ;;
        measure:--modules | check:--btf | minimize:--btf | minimize:--btf-base) _btfslim_btf_inputs ;;
        measure:--svg | minimize:--output | minimize:-o | minimize:--btf-out) _btfslim_files ;;
        minimize:--kernel) _btfslim_btf_inputs ;;
        minimize:--modules | minimize:--keep-for-modules) _btfslim_dirs ;;
        check:--modules) _btfslim_btf_inputs ;;
        minimize:--family) _btfslim_words "tracepoints iterators kfuncs lsm struct_ops" ;;
        dedup:--output | dedup:-o) _btfslim_files ;;
        dedup:--top | dedup:-n) ;;
        *:--id | *:--name | measure:--type | measure:--top | measure:-n) ;;  # free text: nothing to offer
        check:--attach-target | minimize:--attach-target) ;;               # PROG=FUNC: likewise
        check:--optional) ;;                                               # a glob of programs: likewise
        minimize:--keep | minimize:--explain) ;;                          # type names: likewise
        minimize:--jobs | minimize:-j | minimize:--shard) ;;              # numbers: likewise
        *) return 1 ;;
    esac
}

_btfslim() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]} cword=$COMP_CWORD
    COMPREPLY=()
    # bash splits "--format=json" at '=' (COMP_WORDBREAKS): complete the value of the option before it.
    if [[ $cur == = ]]; then
        cur=
    elif [[ $prev == = ]] && ((cword >= 2)); then
        prev=${COMP_WORDS[cword - 2]}
    fi

    local i command=
    for ((i = 1; i < cword; i++)); do
        if [[ ${COMP_WORDS[i]} != -* ]]; then
            command=${COMP_WORDS[i]}
            break
        fi
    done

    if [[ -z $command ]]; then
        if [[ $cur == -* ]]; then
            _btfslim_words "$(_btfslim_options '')"
        else
            _btfslim_words "$_btfslim_commands"
        fi
        return 0
    fi

    if ((cword - i >= 2)) && [[ $prev == -* ]]; then
        _btfslim_value "$command" "$prev" && return 0
    fi
    if [[ $cur == -* ]]; then
        _btfslim_words "$(_btfslim_options "$command")"
        return 0
    fi
    case $command in
        dump | measure | diff | dedup | budget) _btfslim_btf_inputs ;;
        check | minimize) _btfslim_objects ;;
        help) ((cword == i + 1)) && _btfslim_words "$_btfslim_commands" ;;
    esac
    return 0
}

complete -F _btfslim btfslim
