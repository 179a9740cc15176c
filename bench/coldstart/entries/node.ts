/** No library: what a fresh Node process costs by itself (the floor under every other row). */
export const coldRun = async (): Promise<void> => {}
