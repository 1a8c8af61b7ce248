rule regex_repeats
{
    strings:
        $q0 = /ab*c+d?/
        $q1 = /x{3}/
        $q2 = /y{2,}/
        $q3 = /z{1,5}/
        $q4 = /(foo|bar){2,3}baz/
        $q5 = /a.*?b/
        $q6 = /c+?d??e{1,3}?/
        $q7 = /^start|end$/
        $q8 = /(nc){2}x{0,2}/
    condition:
        any of them
}
