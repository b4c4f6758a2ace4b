// What doctor says of the Python a job gets: words only, decided in job-python.ts.

/** Under sudo, python3 resolved to a system folder: the user's venv or conda is not on sudo's PATH. */
export function sudoPathText(sudoUser: string, python: string | null): string {
  const found = python === null ? 'no python3 is on it' : `python3 is ${python}`;
  return (
    `running under sudo for ${sudoUser}: sudo's secure_path replaced ${sudoUser}'s PATH, so ${found}, not the ` +
    `python3 of a venv or conda environment ${sudoUser} activated. ` +
    `Keep theirs: sudo env "PATH=$PATH" ds-analyzer ..., or name the interpreter: ds-analyzer profile --python ` +
    `~/venv/bin/python ... (or its full path after '--')`
  );
}

/** VIRTUAL_ENV names a venv that python3 on PATH is not from. */
export function venvMismatchText(virtualEnv: string, python: string | null): string {
  return (
    `VIRTUAL_ENV is ${virtualEnv} but ${python === null ? 'no python3 is on PATH' : `python3 on PATH is ${python}`}: the job gets that one, not the venv's. ` +
    `Put ${virtualEnv}/bin first on PATH (sudo env "PATH=$PATH" ...), or pass --python ${virtualEnv}/bin/python`
  );
}
