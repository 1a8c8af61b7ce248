rule anonymous
{
    strings:
        $ = "first anonymous"
        $ = { 41 42 43 }
        $ = /anon[0-9]/
    condition:
        all of them
}
