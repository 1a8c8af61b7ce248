rule text_modifiers
{
    strings:
        $plain = "plain text"
        $nc = "MiXeD CaSe" nocase
        $w = "wide only" wide
        $wa = "both forms" wide ascii
        $fw = "word" fullword
        $all = "every one" nocase wide ascii fullword
        $p = "hidden" private
        $esc = "tab\there\nnew line\x00nul \"q\""
    condition:
        any of them
}
