# zsh -f zsh_complete.zsh DIR LINE: prints, one a line, the matches zsh's own
# completion system (compinit, in an interactive zsh on a pseudo-terminal)
# offers for LINE typed at its prompt followed by Tab, with DIR first in fpath.
# compadd is wrapped only to print what it adds (the builtin still adds it).
zmodload zsh/zpty
zpty z zsh -f -i
zpty -w z "PROMPT=; fpath=($1 \$fpath); autoload -U compinit; compinit -u -D"
zpty -w z 'compadd() { if [[ ${@[1,(i)(-|--)]} == *-(O|A|D)\ * ]]; then builtin compadd "$@"; return; fi; typeset -a __h; builtin compadd -A __h "$@"; (( $#__h )) || return 1; print -rl -- "<hit>"${^__h}; }'
zpty -w z 'zstyle ":completion:*" list-grouped false; setopt no_beep'
zpty -w z 'bindkey "^T" complete-word; bindkey "^U" kill-whole-line'
zpty -w z 'print "<ready>"'
zpty -r z line '*<ready>*'
zpty -r z line '*<ready>*'
zpty -w -n z "$2"$'\t'
# Clear the line the completion left, then a marker, split where it is
# typed so that only its output matches.
zpty -w -n z $'\C-u'
zpty -w z 'print "<e""nd>"'
# Everything up to the marker's output at once: a line read alone may come
# back in pieces on a busy machine.
zpty -r z out '*<end>*'
for line in ${(f)out}; do
  [[ $line == *'<hit>'* ]] && print -r -- ${${line##*<hit>}%$'\r'}
done
zpty -d z
