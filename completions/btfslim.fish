# fish completion for btfslim(1).
#
# Installed into fish's vendor_completions.d, from where fish loads it the first time btfslim is completed.
#
# A new command: add it to the list below, a line for the command and lines for its options. The cli tests
# (tests/e2e/test_cli.cc) fail until every option of `btfslim __options` is offered here.

set -l commands dump measure check minimize diff dedup budget help

# BTF to read by name: vmlinux and the modules under /sys/kernel/btf (files come from -F, or from -r for
# an option's value).
function __btfslim_kernel_btf
    echo vmlinux
    for f in /sys/kernel/btf/*
        set -l name (path basename $f)
        test $name != vmlinux; and echo $name
    end
end

# The kinds, completing the last item of a comma-separated list.
function __btfslim_kinds
    set -l token (string replace -r -- '^--?[^=]*=' '' (commandline -ct))
    set -l prefix (string replace -r -- '[^,]*$' '' $token)
    for kind in int ptr array struct union enum fwd typedef volatile const restrict func func_proto var datasec \
            float decl_tag type_tag enum64
        echo $prefix$kind
    end
end

complete -c btfslim -f

# Before a command.
complete -c btfslim -n "not __fish_seen_subcommand_from $commands" -a dump -d 'print the types of a BTF'
complete -c btfslim -n "not __fish_seen_subcommand_from $commands" -a measure -d 'where the bytes of a BTF go'
complete -c btfslim -n "not __fish_seen_subcommand_from $commands" -a check -d 'resolve CO-RE relocations against kernels'
complete -c btfslim -n "not __fish_seen_subcommand_from $commands" -a minimize -d 'a BTF with only what BPF objects relocate against'
complete -c btfslim -n "not __fish_seen_subcommand_from $commands" -a diff -d 'compare two BTFs: layouts, or footprint per kind'
complete -c btfslim -n "not __fish_seen_subcommand_from $commands" -a dedup -d 'deduplicate BTF and report what was removed'
complete -c btfslim -n "not __fish_seen_subcommand_from $commands" -a budget -d 'check a BTF against the limits of a budget file'
complete -c btfslim -n "not __fish_seen_subcommand_from $commands" -a help -d 'show help, or a command\'s'
complete -c btfslim -n "not __fish_seen_subcommand_from $commands" -s h -l help -d 'print help and exit'
complete -c btfslim -n "not __fish_seen_subcommand_from $commands" -s V -l version -d 'print the versions and features'

# Options every command has, and -B, the input's base, where a command reads split BTF.
complete -c btfslim -n "__fish_seen_subcommand_from $commands" -s h -l help -d 'print the options and exit'
complete -c btfslim -n '__fish_seen_subcommand_from dump measure check minimize diff dedup budget' -l strict-input -d 'inputs are files only, never the running kernel by default'
complete -c btfslim -n '__fish_seen_subcommand_from dump measure check minimize diff dedup budget' -s q -l quiet -d 'no progress line on stderr'
complete -c btfslim -n '__fish_seen_subcommand_from dump measure check minimize diff dedup' -s B -l base -l base-btf -r -a '(__btfslim_kernel_btf)' -d 'the base BTF a split input continues'

# dump and measure read one BTF.
complete -c btfslim -n '__fish_seen_subcommand_from dump measure' -F -a '(__btfslim_kernel_btf)'

complete -c btfslim -n '__fish_seen_subcommand_from dump' -s f -l format -x -a 'raw json c' -d 'output format'
complete -c btfslim -n '__fish_seen_subcommand_from dump' -l id -x -d 'only these type ids (5, 5-9, 5,7,10-12)'
complete -c btfslim -n '__fish_seen_subcommand_from dump' -l name -x -d 'only types with this name or glob'
complete -c btfslim -n '__fish_seen_subcommand_from dump' -l kind -x -a '(__btfslim_kinds)' -d 'only types of these kinds'

complete -c btfslim -n '__fish_seen_subcommand_from measure' -s f -l format -x -a 'table csv json' -d 'output format'
complete -c btfslim -n '__fish_seen_subcommand_from measure' -l by -x -a 'default kind type prefix' -d 'which roll-up'
complete -c btfslim -n '__fish_seen_subcommand_from measure' -l sort -x -a 'own retained' -d 'rank types by'
complete -c btfslim -n '__fish_seen_subcommand_from measure' -s n -l top -x -d 'rows before [N others]'
complete -c btfslim -n '__fish_seen_subcommand_from measure' -l all -d 'list every type'
complete -c btfslim -n '__fish_seen_subcommand_from measure' -l closure -d 'with --all: closure bytes for every type'
complete -c btfslim -n '__fish_seen_subcommand_from measure' -l kind -x -a '(__btfslim_kinds)' -d 'only types of these kinds'
complete -c btfslim -n '__fish_seen_subcommand_from measure' -l name -x -d 'only types whose name matches this glob'
complete -c btfslim -n '__fish_seen_subcommand_from measure' -l type -x -d 'one type in detail'
complete -c btfslim -n '__fish_seen_subcommand_from measure' -l without -x -a '(__btfslim_kinds)' -d 'the BTF without these kinds'
complete -c btfslim -n '__fish_seen_subcommand_from measure' -l kernel-model -x -a 'builtin module' -d 'how vmlinux BTF reaches the kernel'
complete -c btfslim -n '__fish_seen_subcommand_from measure' -l resident-base -r -a '(__btfslim_kernel_btf)' -d 'a small resident base'
complete -c btfslim -n '__fish_seen_subcommand_from measure' -l modules -d 'compare module BTFs: files, .ko trees or /sys/kernel/btf'
complete -c btfslim -n '__fish_seen_subcommand_from measure' -l svg -r -d 'also write an SVG picture of where the bytes go'

# check: BPF objects, against target BTFs.
complete -c btfslim -n '__fish_seen_subcommand_from check' -k -a '(__fish_complete_suffix .o)'
complete -c btfslim -n '__fish_seen_subcommand_from check' -l btf -r -a '(__btfslim_kernel_btf)' -d 'target BTF, module or directory'
complete -c btfslim -n '__fish_seen_subcommand_from check' -s f -l format -x -a 'table json github junit' -d 'output format'
complete -c btfslim -n '__fish_seen_subcommand_from check' -l failures-only -d 'only the objects that fail, and what fails them'
complete -c btfslim -n '__fish_seen_subcommand_from check' -l strict -d 'also fail on poisoned relocations in dead code'
complete -c btfslim -n '__fish_seen_subcommand_from check' -l allow-missing -d 'deprecated, does nothing'
complete -c btfslim -n '__fish_seen_subcommand_from check' -l attach-target -x -d 'PROG=FUNC: a target set at run time'
complete -c btfslim -n '__fish_seen_subcommand_from check' -l no-attach -d 'leave attach targets out of the verdict'
complete -c btfslim -n '__fish_seen_subcommand_from check' -l optional -x -d 'GLOB: programs a loader may leave out'
complete -c btfslim -n '__fish_seen_subcommand_from check' -l modules -r -F -d 'the modules of the one --btf kernel'

# minimize: BPF objects, from a source BTF.
complete -c btfslim -n '__fish_seen_subcommand_from minimize' -k -a '(__fish_complete_suffix .o)'
complete -c btfslim -n '__fish_seen_subcommand_from minimize' -l btf -r -a '(__btfslim_kernel_btf)' -d 'source BTF, directory or archive'
complete -c btfslim -n '__fish_seen_subcommand_from minimize' -l split-base -r -a '(__btfslim_kernel_btf)' -d 'write split BTF on this base (the output\'s)'
complete -c btfslim -n '__fish_seen_subcommand_from minimize' -s o -l output -r -F -d 'where to write the BTF (-: stdout; a batch: a directory)'
complete -c btfslim -n '__fish_seen_subcommand_from minimize' -l keep -x -d 'also keep this type with all its members'
complete -c btfslim -n '__fish_seen_subcommand_from minimize' -l explain -x -d 'say why a type is kept'
complete -c btfslim -n '__fish_seen_subcommand_from minimize' -l no-verify -d 'do not verify the output'
complete -c btfslim -n '__fish_seen_subcommand_from minimize' -l elf -d 'write an ELF object with a .BTF section'
complete -c btfslim -n '__fish_seen_subcommand_from minimize' -l skip-poisoned -d 'skip sources where a relocation fails'
complete -c btfslim -n '__fish_seen_subcommand_from minimize' -s j -l jobs -x -d 'sources minimized at once'
complete -c btfslim -n '__fish_seen_subcommand_from minimize' -l shard -x -d 'only part I/N of the batch'
complete -c btfslim -n '__fish_seen_subcommand_from minimize' -l kernel -r -F -d 'slim the BTF this vmlinux carries'
complete -c btfslim -n '__fish_seen_subcommand_from minimize' -l btf-out -r -F -d 'also write the slim .BTF alone'
complete -c btfslim -n '__fish_seen_subcommand_from minimize' -l modules -r -a '(__fish_complete_directories)' -d 'rewrite the modules under this directory'
complete -c btfslim -n '__fish_seen_subcommand_from minimize' -l keep-for-modules -r -a '(__fish_complete_directories)' -d 'keep what the modules under this directory refer to'
complete -c btfslim -n '__fish_seen_subcommand_from minimize' -l family -x -a 'tracepoints iterators kfuncs lsm struct_ops' -d 'keep every attach point of a family'
complete -c btfslim -n '__fish_seen_subcommand_from minimize' -l attach-target -x -d 'PROG=FUNC: the target a loader sets'

# diff: two BTFs, old and new.
complete -c btfslim -n '__fish_seen_subcommand_from diff' -F -a '(__btfslim_kernel_btf)'
complete -c btfslim -n '__fish_seen_subcommand_from diff' -s f -l format -x -a 'table csv json' -d 'output format'
complete -c btfslim -n '__fish_seen_subcommand_from diff' -l by -x -a 'type member kind' -d 'what a row is'
complete -c btfslim -n '__fish_seen_subcommand_from diff' -s n -l top -x -d 'table rows before [N others]'
complete -c btfslim -n '__fish_seen_subcommand_from diff' -s v -l verbose -d 'each member change under its type'
complete -c btfslim -n '__fish_seen_subcommand_from diff' -l old-base -r -a '(__btfslim_kernel_btf)' -d 'the base the old input continues'
complete -c btfslim -n '__fish_seen_subcommand_from diff' -l new-base -r -a '(__btfslim_kernel_btf)' -d 'the base the new input continues'

# dedup: BTF inputs, merged and deduplicated.
complete -c btfslim -n '__fish_seen_subcommand_from dedup' -F -a '(__btfslim_kernel_btf)'
complete -c btfslim -n '__fish_seen_subcommand_from dedup' -s o -l output -r -F -d 'where to write the BTF (-: stdout)'
complete -c btfslim -n '__fish_seen_subcommand_from dedup' -l check -d 'write nothing; exit 1 when a type would be removed'
complete -c btfslim -n '__fish_seen_subcommand_from dedup' -s f -l format -x -a 'table json' -d 'report format'
complete -c btfslim -n '__fish_seen_subcommand_from dedup' -s n -l top -x -d 'rows of the largest duplicated types'

# help COMMAND
# budget: BTF inputs, from a budget file.
complete -c btfslim -n '__fish_seen_subcommand_from budget' -F -a '(__btfslim_kernel_btf)'
complete -c btfslim -n '__fish_seen_subcommand_from budget' -s c -l config -r -k -a '(__fish_complete_suffix .toml)' -d 'the budget file (default: btfslim.toml)'
complete -c btfslim -n '__fish_seen_subcommand_from budget' -s f -l format -x -a 'table json junit github' -d 'output format'

complete -c btfslim -n "__fish_seen_subcommand_from help; and not __fish_seen_subcommand_from dump measure check minimize diff dedup budget" -a "dump measure check minimize diff dedup budget help"
