/* leading block comment with "quotes" and { braces } */
// line comment with rule keyword: rule fake { condition: false }
rule comments_escapes // trailing
{
    strings:
        $a = "slash \\ quote \" hex \xFF \x7f tab\t" // after a string
        $b = { 4D /* inside hex */ 5A // line
               90 }
        $c = /a\/b\.c/ // escaped slash
    condition: /* before */ $a or $b or $c /* after */
}
