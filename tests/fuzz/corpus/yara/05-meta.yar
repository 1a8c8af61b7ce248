rule with_meta
{
    meta:
        author = "fuzz seed"
        description = "escapes: \"quoted\" \t tab \\ backslash \x41"
        version = 3
        negative = -12
        reviewed = true
        stale = false
    strings:
        $a = "meta"
    condition:
        $a
}
