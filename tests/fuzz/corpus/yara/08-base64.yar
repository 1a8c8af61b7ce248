rule base64_forms
{
    strings:
        $b0 = "This program cannot" base64
        $b1 = "wide base64 text" base64wide
        $b2 = "both encodings" base64 base64wide
        $b3 = "custom alphabet" base64("!@#$%^&*(){}[].,|ABCDEFGHIJ\x09LMNOPQRSTUVWXYZabcdefghijklmnopqrstu")
        $b4 = "custom wide" base64wide("!@#$%^&*(){}[].,|ABCDEFGHIJ\x09LMNOPQRSTUVWXYZabcdefghijklmnopqrstu")
    condition:
        any of ($b*)
}
