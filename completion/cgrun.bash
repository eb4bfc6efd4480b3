# bash completion for cgrun(1) and cgrun-rdzvd(8)                 -*- sh -*-
#
# Installed twice, as bash-completion's completions/cgrun and
# completions/cgrun-rdzvd.  It knows no option itself: it reads the
# program's own --help once per shell (that text is printed from the
# program's one option table: launcher/cli/options.c, for cgrun-rdzvd
# rendezvous/daemon/config.c), so it cannot drift from the program:
#
#   options     every long option, both spellings when the help says
#               "underscore spelling", and the short ones
#   values      an option's fixed values are the lower-case words of its
#               metavariable (--tty auto|always|never, --nproc-per-node
#               N|cpu|gpu|auto, 0-3 for 0 1 2 3); FILE: files, DIR:
#               directories, HOST or ADDR: host names
#   the script  the first word that is not an option or an option's value
#               is the training script (a file; a command with
#               --no-python); every word after it is the script's: files

declare -gA _cgrun_opts _cgrun_meta

# Read PROGRAM --help once into _cgrun_opts[PROGRAM] (the words to offer)
# and _cgrun_meta[PROGRAM NAME] (the metavariable of a value's option).
_cgrun_load()
{
    local prog=$1 line short long meta under=0 opts=
    local re='^ +(-([A-Za-z0-9]))?(, )?(--([a-z0-9][a-z0-9-]*))?([= ]([^ ]+))?'
    [[ -n ${_cgrun_opts[$prog]+set} ]] && return
    local help
    help=$("$prog" --help 2>/dev/null) || help=
    [[ $help == *"underscore spelling"* ]] && under=1
    while IFS= read -r line; do
        [[ $line =~ $re ]] || continue
        short=${BASH_REMATCH[2]} long=${BASH_REMATCH[5]}
        meta=${BASH_REMATCH[7]}
        [[ -n $short ]] && opts+=" -$short"
        [[ -n $long ]] && opts+=" --$long"
        ((under)) && [[ $long == *-* ]] && opts+=" --${long//-/_}"
        [[ -z $meta ]] && continue
        [[ -n $short ]] && _cgrun_meta["$prog -$short"]=$meta
        [[ -n $long ]] && _cgrun_meta["$prog --$long"]=$meta
    done <<<"$help"
    _cgrun_opts[$prog]=$opts
}

# _cgrun_m: the metavariable of option word OPT of PROGRAM (either
# spelling), or "" (a flag, or not an option).
_cgrun_meta_of()
{
    local prog=$1 opt=$2
    [[ $opt == --* ]] && opt=${opt//_/-}
    _cgrun_m=${_cgrun_meta["$prog $opt"]-}
}

# Complete cur as a value of an option whose metavariable is META.
_cgrun_values()
{
    local meta=$1 tok words= i lo hi
    local IFS='|'
    for tok in $meta; do
        if [[ $tok =~ ^[a-z][a-z0-9_-]*$ ]]; then
            words+=" $tok"
        elif [[ $tok =~ ^([0-9]+)-([0-9]+)$ ]]; then
            lo=${BASH_REMATCH[1]} hi=${BASH_REMATCH[2]}
            for ((i = lo; i <= hi; i++)); do words+=" $i"; done
        elif [[ $tok == DIR* ]]; then
            _filedir -d
            return
        elif [[ $tok == FILE* || $tok == PATH* ]]; then
            _filedir
            return
        elif [[ $tok == HOST* || $tok == ADDR* ]]; then
            COMPREPLY+=($(compgen -A hostname -- "$cur"))
            return
        fi
    done
    IFS=$' \t\n'
    COMPREPLY=($(compgen -W "$words" -- "$cur"))
}

# Where the script is among words[1..cword-1]: _cgrun_at is its index (0:
# none yet), _cgrun_nopython whether --no-python came before it.
_cgrun_script_at()
{
    local prog=$1 i w
    _cgrun_at=0 _cgrun_nopython=0
    for ((i = 1; i < cword; i++)); do
        w=${words[i]}
        case $w in
        --) _cgrun_at=$((i + 1)); return ;;
        --no-python | --no_python) _cgrun_nopython=1 ;;
        --*=*) ;;
        -*)
            _cgrun_meta_of "$prog" "$w"
            [[ -n $_cgrun_m ]] && ((i++))
            ;;
        *) _cgrun_at=$i; return ;;
        esac
    done
}

# The completion of cgrun and cgrun-rdzvd.
_cgrun()
{
    local cur prev words cword split prog _cgrun_m _cgrun_at _cgrun_nopython
    declare -F _init_completion >/dev/null || return
    _init_completion -s -n : || return
    prog=${words[0]}
    _cgrun_load "$prog"

    _cgrun_at=0 _cgrun_nopython=0
    [[ ${prog##*/} == cgrun ]] && _cgrun_script_at "$prog"
    if ((_cgrun_at > 0 && _cgrun_at < cword)); then
        _filedir    # the script's own arguments
        return
    fi
    _cgrun_meta_of "$prog" "$prev"
    if [[ -n $_cgrun_m ]]; then
        _cgrun_values "$_cgrun_m"
        __ltrim_colon_completions "$cur"
        return
    fi
    $split && return
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "${_cgrun_opts[$prog]}" -- "$cur"))
        return
    fi
    [[ ${prog##*/} == cgrun ]] || return
    # the script: a file, or with --no-python a command too
    _filedir
    ((_cgrun_nopython)) && COMPREPLY+=($(compgen -c -- "$cur" | sort -u))
}

complete -F _cgrun cgrun cgrun-rdzvd
