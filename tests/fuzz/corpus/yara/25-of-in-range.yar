rule of_in_range
{
    strings:
        $a = "head"
        $b = "tail"
    condition:
        any of them in (0..10) and all of ($a, $b) in (0..filesize) or
        #a in (0..100) > 1
}
