# bash completion for fikit, fikit-launch and fikitd. The commands and options
# come from the programs' own --help at completion time, so they never drift.

_fikit_options() {
    # The long and short options a --help lists.
    "$@" --help 2>/dev/null | grep -oE '(^|[ ,])--?[a-zA-Z][a-zA-Z-]*' | tr -d ' ,' | sort -u
}

_fikit() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
    case $prev in
        -c|--config|-o|--out|--json|--trace|--service|--loop|-s|--socket)
            COMPREPLY=($(compgen -f -- "$cur")); return ;;
    esac
    if [ "$COMP_CWORD" -eq 1 ]; then
        local cmds
        cmds=$(fikit --help 2>/dev/null | awk '/^Commands:/{on=1; next} on && /^  [a-z]/{print $1} on && /^$/{on=0}')
        COMPREPLY=($(compgen -W "$cmds --help --version" -- "$cur"))
        return
    fi
    local cmd=${COMP_WORDS[1]}
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$(_fikit_options fikit "$cmd")" -- "$cur"))
    else
        COMPREPLY=($(compgen -f -- "$cur"))
    fi
}

_fikit_launch() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} i
    # After --, the program and its arguments: complete them as a command line.
    for ((i = 1; i < COMP_CWORD; i++)); do
        if [ "${COMP_WORDS[i]}" = "--" ]; then
            if [ $((i + 1)) -eq "$COMP_CWORD" ]; then
                COMPREPLY=($(compgen -c -- "$cur"))
            else
                COMPREPLY=($(compgen -f -- "$cur"))
            fi
            return
        fi
    done
    case $prev in
        -c|--config) COMPREPLY=($(compgen -f -- "$cur")); return ;;
        -b|--backend) COMPREPLY=($(compgen -W "auto cuda hip opencl" -- "$cur")); return ;;
        -p|--priority) COMPREPLY=($(compgen -W "0 1 2 3 4 5 6 7 8 9" -- "$cur")); return ;;
    esac
    COMPREPLY=($(compgen -W "$(_fikit_options fikit-launch) --" -- "$cur"))
}

_fikitd() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
    case $prev in
        -c|--config|-s|--socket) COMPREPLY=($(compgen -f -- "$cur")); return ;;
        -l|--log-level) COMPREPLY=($(compgen -W "error warn info debug trace" -- "$cur")); return ;;
    esac
    COMPREPLY=($(compgen -W "$(_fikit_options fikitd)" -- "$cur"))
}

complete -F _fikit fikit
complete -F _fikit_launch fikit-launch
complete -F _fikitd fikitd
