rule for_of
{
    strings:
        $a = "first"
        $b = "second"
        $c = "third"
    condition:
        for any of ($a, $b) : ( $ at 0 ) and
        for all of them : ( # > 1 and @ > 10 and ! < 100 ) and
        for 2 of ($*) : ( $ in (0..filesize) )
}
