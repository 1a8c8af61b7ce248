rule externals_typed
{
    condition:
        ext_int > 10 and ext_float < 2.0 and ext_bool and ext_str == "fuzz" and
        ext_str contains "uz" and ext_str matches /f.zz/ and ext_int + 1 == 43
}
