rule string_operators
{
    condition:
        "haystack" contains "st" and
        "HayStack" icontains "STACK" and
        "prefix-body" startswith "prefix" and
        "Prefix-body" istartswith "PREFIX" and
        "body-suffix" endswith "suffix" and
        "body-SUFFIX" iendswith "suffix" and
        "Same" iequals "sAME" and
        "matched text" matches /t[a-z]+t$/ and
        "ab" != "abc" and "a" < "b" and "b" >= "a"
}
