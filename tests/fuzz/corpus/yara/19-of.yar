rule of_sets
{
    strings:
        $a1 = "one"
        $a2 = "two"
        $b1 = "three"
        $ = "anonymous"
    condition:
        2 of ($a*) and any of ($a1, $b1) and all of them and none of ($b*) or
        1 of ($*) and 50% of them and 3 of them
}
