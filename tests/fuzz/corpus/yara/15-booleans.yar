rule booleans
{
    strings:
        $a = "alpha"
        $b = "beta"
        $c = "gamma"
    condition:
        ($a and not $b) or ($b and $c) or not ($a or $b or $c) and true and not false
}
