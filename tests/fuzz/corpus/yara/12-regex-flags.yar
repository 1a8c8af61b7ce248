rule regex_flags
{
    strings:
        $r0 = /abc/
        $r1 = /case insensitive/i
        $r2 = /dot.all/s
        $r3 = /both.flags/is
        $r4 = /wide regex/ wide ascii nocase
        $r5 = /word/ fullword private
    condition:
        any of them
}
