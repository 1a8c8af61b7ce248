rule regex_classes
{
    strings:
        $c0 = /[a-z0-9_]+@[a-z]+\.(com|net|org)/
        $c1 = /[^\x00-\x1f\x7f]{8}/
        $c2 = /\d{3}-\d{4}/
        $c3 = /\w+\s\W\S\D/
        $c4 = /\bhttp:\/\/[\w.-]+\b/
        $c5 = /[\]\[\-\\]x/
        $c6 = /\x4d\x5a\t\n\r\f\a\\/
    condition:
        any of them
}
