# zsh -f zsh_complete.zsh DIR LINE: prints, one a line, the matches zsh's own
# completion system (compinit, in an interactive zsh on a pseudo-terminal)
# offers for LINE typed at its prompt followed by Tab, with DIR first in fpath.
# compadd is wrapped only to print what it adds (the builtin still adds it).
#
# Every marker this reads is split where it is typed ("<rea""dy>"), so that
# only the shell's output matches it, never the terminal's echo of the input.
# The line and its Tab are typed only once the shell has printed <ready>, and
# the ^U that clears it only once Tab's widget has printed <done>: keys that
# arrive while the shell still runs a command meet the terminal in canonical
# mode, where ^U is the kernel's line kill and would erase the typed line
# before the line editor ever saw it (a busy CI machine did that once).
zmodload zsh/zpty
zpty z zsh -f -i
zpty -w z "PROMPT=; fpath=($1 \$fpath); autoload -U compinit; compinit -u -D"
zpty -w z 'compadd() { if [[ ${@[1,(i)(-|--)]} == *-(O|A|D)\ * ]]; then builtin compadd "$@"; return; fi; typeset -a __h; builtin compadd -A __h "$@"; (( $#__h )) || return 1; print -rl -- "<hit>"${^__h}; }'
zpty -w z 'zstyle ":completion:*" list-grouped false; setopt no_beep'
zpty -w z '__tab() { zle complete-word; print -n "<do""ne>"; }; zle -N __tab'
zpty -w z 'bindkey "^I" __tab; bindkey "^U" kill-whole-line'
zpty -w z 'print "<rea""dy>"'
# What came before <ready> holds the echo of compadd's wrapper, not a match.
zpty -r z out '*<ready>*'
zpty -w -n z "$2"$'\t'
zpty -r z out '*<done>*'
# Clear the line the completion left, then the end marker.
zpty -w -n z $'\C-u'
zpty -w z 'print "<e""nd>"'
# Everything up to the marker's output at once: a line read alone may come
# back in pieces on a busy machine.
zpty -r z more '*<end>*'
out+=$more
for line in ${(f)out}; do
  [[ $line == *'<hit>'* ]] && print -r -- ${${line##*<hit>}%$'\r'}
done
zpty -d z
